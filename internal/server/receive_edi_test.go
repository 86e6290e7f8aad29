package server_test

import (
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/tidwall/gjson"

	"github.com/lefia/edihub/internal/canon"
	"github.com/lefia/edihub/internal/edi"
)

// interchangeAnswer decodes the answer to an interchange.
type interchangeAnswer struct {
	Interchange map[string]any
	Messages    []map[string]any
}

func (b *testBundle) postInterchange(t *testing.T, body []byte, contentType string, headers ...string) response {
	t.Helper()
	return b.postTo(t, "/api/edi-hub/receive-message", body, append([]string{"Content-Type", contentType}, headers...)...)
}

func decodeInterchange(t *testing.T, r response) interchangeAnswer {
	t.Helper()
	require.Equal(t, http.StatusOK, r.status, "%s", r.body)
	var a interchangeAnswer
	require.NoError(t, json.Unmarshal(r.body, &a))
	return a
}

// withControlNumber gives the X12 sample another interchange control
// number, in ISA13 and IEA02.
func withControlNumber(body []byte, control string) []byte {
	s := strings.Replace(string(body), "*000000905*", "*"+control+"*", 1)
	return []byte(strings.Replace(s, "IEA*1*000000905", "IEA*1*"+control, 1))
}

// Each transaction set of an X12 interchange is one message, stored with
// its own segments and decided on its JSON view's key paths.
func TestInterchangeX12Accepted(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.messageType(t, "850", []string{"BEG.0.BEG03"}, nil)
	body := readFile(t, "x12_850.edi")

	a := decodeInterchange(t, b.postInterchange(t, body, "application/edi-x12"))
	require.Equal(t, map[string]any{"standard": "x12", "sender": "ZZ:ACMEBUYER", "receiver": "ZZ:EDIHUBSELLER",
		"control_number": "000000905", "version": "00401", "messages": float64(2), "status": "accepted", "duplicate_of": nil}, a.Interchange)
	require.Len(t, a.Messages, 2)
	for i, m := range a.Messages {
		require.Equal(t, "accepted", m["status"])
		require.Equal(t, "850", m["message_type"])
		require.Equal(t, fmt.Sprintf("%04d", i+1), m["docnum"])
	}
	stored := b.storedMessages(t)
	require.Len(t, stored, 2)
	require.Equal(t, "application/edi-x12", stored[0].ContentType)
	require.True(t, strings.HasPrefix(string(stored[0].ReceivedBytes), "ST*850*0001~"))
	require.True(t, strings.HasSuffix(string(stored[0].ReceivedBytes), "SE*8*0001~"))
	require.Equal(t, int32(2), *stored[1].PacketPosition)
	require.Equal(t, int32(2), *stored[1].PacketSize)
	// Each message is stored as its segments and its frame, not its view,
	// which is rebuilt from them.
	for _, m := range stored {
		require.Nil(t, m.Payload)
		require.NotNil(t, m.EdiFrame)
	}
	require.Equal(t, "PO-4711", gjson.GetBytes(stored[0].view(t), "BEG.0.BEG03").String())
	// A view has one shape, so its shape hash is its content hash, which
	// the row does not hold twice.
	require.Equal(t, 0, b.count(t, `SELECT count(*) FROM messages WHERE shape_hash IS NOT NULL`))
	require.Equal(t, "000000905", gjson.GetBytes(stored[1].view(t), "interchange.control_number").String())

	// The same purchase orders under a new control number are blocked by
	// their business key, as any retransmission is.
	again := decodeInterchange(t, b.postInterchange(t, withControlNumber(body, "000000906"), "application/edi-x12"))
	require.Equal(t, "accepted", again.Interchange["status"])
	for i, m := range again.Messages {
		require.Equal(t, "duplicate", m["status"])
		require.Equal(t, a.Messages[i]["id"], m["duplicate_of"])
	}
	require.Equal(t, 2, b.messages(t))
}

// An interchange's view has one shape, so a copy of it sent as JSON is
// compared on its content: the view itself is identical, and the view with
// a segment that occurs once written as its occurrence alone, which canon's
// shape form would not tell apart, is a changed copy kept for review.
func TestInterchangeViewSentAsJSONIsComparedOnContent(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.messageType(t, "850", []string{"BEG.0.BEG03"}, nil)
	a := decodeInterchange(t, b.postInterchange(t, readFile(t, "x12_850.edi"), "application/edi-x12"))
	require.Equal(t, "accepted", a.Messages[0]["status"])
	view := b.storedMessages(t)[0].view(t)

	var members map[string]json.RawMessage
	require.NoError(t, json.Unmarshal(view, &members))
	st := members["ST"]
	require.Equal(t, byte('['), st[0])
	members["ST"] = st[1 : len(st)-1]
	reshaped, err := json.Marshal(members)
	require.NoError(t, err)
	canonical, err := canon.JSON(reshaped)
	require.NoError(t, err)
	viewCanonical, err := canon.JSON(view)
	require.NoError(t, err)
	require.Equal(t, canon.ShapeHash(viewCanonical, sha256.Sum256(viewCanonical)), canon.ShapeHash(canonical, sha256.Sum256(canonical)),
		"the two have the same shape form")

	for _, payload := range [][]byte{view, reshaped} {
		body, err := json.Marshal(map[string]any{"message_type": "850", "payload": json.RawMessage(payload)})
		require.NoError(t, err)
		r := b.post(t, body)
		require.Equal(t, http.StatusOK, r.status, "%s", r.body)
	}
	var contents []string
	require.NoError(t, b.pool.QueryRow(t.Context(), `SELECT array_agg(details->>'content' ORDER BY id) FROM audit_events
		WHERE action = 'message.duplicate_blocked'`).Scan(&contents))
	require.Equal(t, []string{"identical", "changed"}, contents)
	require.Equal(t, 1, b.count(t, `SELECT count(*) FROM blocked_copies`))
	require.Equal(t, 2, b.messages(t))
}

// An EDIFACT interchange is read with application/edifact, and as
// text/plain when it starts as one.
func TestInterchangeEDIFACTAccepted(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.messageType(t, "ORDERS", []string{"BGM.0.BGM02"}, nil)
	body := readFile(t, "edifact_orders.edi")
	a := decodeInterchange(t, b.postInterchange(t, body, "application/edifact"))
	require.Equal(t, "edifact", a.Interchange["standard"])
	require.Equal(t, "14:5412345000013", a.Interchange["sender"])
	require.Len(t, a.Messages, 1)
	require.Equal(t, "accepted", a.Messages[0]["status"])
	require.Equal(t, "M1", a.Messages[0]["docnum"])
	stored := b.storedMessages(t)
	require.Len(t, stored, 1)
	require.Equal(t, "PO+4711", gjson.GetBytes(stored[0].view(t), "BGM.0.BGM02").String(), "the release character honoured")

	plain := decodeInterchange(t, b.postInterchange(t, body, "text/plain; charset=utf-8"))
	require.Equal(t, "duplicate", plain.Interchange["status"])
	require.Equal(t, 1, b.messages(t))

	r := b.postInterchange(t, []byte("hello"), "text/plain")
	require.Equal(t, http.StatusUnsupportedMediaType, r.status, "%s", r.body)
}

// A broken interchange is refused naming the segment and its position,
// and nothing of it is stored.
func TestInterchangeMalformed(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.messageType(t, "850", []string{"BEG.0.BEG03"}, nil)
	b.messageType(t, "ORDERS", []string{"BGM.0.BGM02"}, nil)
	x12 := string(readFile(t, "x12_850.edi"))
	orders := string(readFile(t, "edifact_orders.edi"))
	for _, tc := range []struct {
		body, contentType, detail string
	}{
		{strings.Replace(x12, "SE*4*0002", "SE*5*0002", 1), "application/edi-x12", "segment 14 (SE), element SE01"},
		{strings.Replace(x12, "IEA*1*000000905~\n", "", 1), "application/edi-x12", "segment 16"},
		{x12[:50], "application/edi-x12", "segment 1 (ISA)"},
		{strings.Replace(orders, "UNZ+1+IC0042", "UNZ+1+IC0043", 1), "application/edifact", "segment 11 (UNZ), element UNZ02"},
		{strings.Replace(orders, "UNOC", "UNOQ", 1), "text/plain", "segment 2 (UNB), element UNB01"},
		{"<xml/>", "application/edifact", "neither ISA, UNA nor UNB"},
	} {
		r := b.postInterchange(t, []byte(tc.body), tc.contentType)
		require.Equal(t, http.StatusBadRequest, r.status, "%s", r.body)
		p := r.json(t)
		require.Equal(t, "malformed-interchange", p["type"])
		require.Contains(t, p["detail"], tc.detail)
	}
	require.Equal(t, 0, b.messages(t))
}

// An interchange of a type the tenant has not configured is refused as
// any message of an unknown type is, and nothing of it is stored.
func TestInterchangeUnknownType(t *testing.T) {
	t.Parallel()
	b := setup(t)
	r := b.postInterchange(t, readFile(t, "x12_850.edi"), "application/edi-x12")
	require.Equal(t, http.StatusUnprocessableEntity, r.status, "%s", r.body)
	p := r.json(t)
	require.Equal(t, "unknown-message-type", p["type"])
	require.Contains(t, p["detail"], "transaction set 1 of 2 (850 0001)")
	require.Equal(t, 0, b.messages(t))
}

// An interchange holds at most MAX_BATCH_MESSAGES messages.
func TestInterchangeTooManyMessages(t *testing.T) {
	t.Parallel()
	b := setupConfigured(t, map[string]string{"MAX_BATCH_MESSAGES": "40"})
	b.messageType(t, "ORDERS", []string{"BGM.0.BGM02"}, nil)
	var body strings.Builder
	body.WriteString("UNB+UNOC:3+A:14+B:14+261204:0941+9'")
	for i := range 41 {
		fmt.Fprintf(&body, "UNH+%d+ORDERS:D:96A:UN'BGM+220+PO%d+9'UNT+3+%d'", i, i, i)
	}
	body.WriteString("UNZ+41+9'")
	r := b.postInterchange(t, []byte(body.String()), "application/edifact")
	require.Equal(t, http.StatusRequestEntityTooLarge, r.status, "%s", r.body)
	require.Contains(t, r.json(t)["detail"], "more than 40 messages")
	require.Contains(t, r.json(t)["detail"], "MAX_BATCH_MESSAGES")
	require.Equal(t, 0, b.messages(t))
}

// The same interchange again replays the first answer, stores nothing and
// records each message's duplicate with mode interchange; line breaks
// between segments do not make it another interchange.
func TestInterchangeDuplicateReplays(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.messageType(t, "850", []string{"BEG.0.BEG03"}, nil)
	body := readFile(t, "x12_850.edi")
	first := b.postInterchange(t, body, "application/edi-x12")
	a := decodeInterchange(t, first)

	again := b.postInterchange(t, []byte(strings.ReplaceAll(string(body), "\n", "\r\n")), "application/edi-x12")
	d := decodeInterchange(t, again)
	require.Equal(t, "true", again.header.Get("Idempotent-Replayed"))
	require.Equal(t, "duplicate", d.Interchange["status"])
	require.NotNil(t, d.Interchange["duplicate_of"])
	require.Equal(t, a.Messages, d.Messages, "the first answer's receipts")
	require.Equal(t, 2, b.messages(t))
	require.Equal(t, 1, b.count(t, `SELECT count(*) FROM interchanges`))
	require.Equal(t, d.Interchange["duplicate_of"], float64(b.count(t, `SELECT id FROM interchanges`)))
	require.Equal(t, 2, b.count(t, `SELECT count(*) FROM audit_events WHERE action = 'message.duplicate_blocked'
		AND details->>'mode' = 'interchange' AND details->'interchange'->>'control_number' = '000000905'
		AND details->>'content' = 'identical' AND match_key = '000000905'`))
	require.Equal(t, []int{int(a.Messages[0]["id"].(float64)), int(a.Messages[1]["id"].(float64))},
		[]int{b.count(t, `SELECT message_id FROM audit_events WHERE details->'source'->>'position' = '1'`),
			b.count(t, `SELECT message_id FROM audit_events WHERE details->'source'->>'position' = '2'`)})
}

// A control number used again for other content is refused, and nothing
// is stored; the same control number from another sender is another
// interchange.
func TestInterchangeControlNumberReused(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.messageType(t, "850", []string{"BEG.0.BEG03"}, nil)
	body := string(readFile(t, "x12_850.edi"))
	decodeInterchange(t, b.postInterchange(t, []byte(body), "application/edi-x12"))

	r := b.postInterchange(t, []byte(strings.Replace(body, "PO-4712", "PO-4799", 1)), "application/edi-x12")
	require.Equal(t, http.StatusUnprocessableEntity, r.status, "%s", r.body)
	p := r.json(t)
	require.Equal(t, "interchange-control-number-reused", p["type"])
	require.Contains(t, p["detail"], "000000905 from ZZ:ACMEBUYER to ZZ:EDIHUBSELLER")
	require.Contains(t, p["acknowledgment"], "*ZZ*EDIHUBSELLER   *ZZ*ACMEBUYER      *")
	require.Contains(t, p["acknowledgment"], "TA1*000000905*261204*0941*R*025~")
	require.Equal(t, 2, b.messages(t))
	require.Equal(t, 0, b.blockedEvents(t))

	other := strings.Replace(strings.Replace(body, "ZZ*ACMEBUYER      ", "ZZ*OTHERBUYER     ", 1), "PO-4712", "PO-4799", 1)
	a := decodeInterchange(t, b.postInterchange(t, []byte(other), "application/edi-x12"))
	require.Equal(t, "accepted", a.Interchange["status"])
	require.Equal(t, "duplicate", a.Messages[0]["status"], "PO-4711 is blocked by its business key")
	require.Equal(t, "accepted", a.Messages[1]["status"])
	require.Equal(t, 3, b.messages(t))
}

// After INTERCHANGE_WINDOW a control number is free again.
func TestInterchangeWindowPasses(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.messageType(t, "850", []string{"BEG.0.BEG03"}, nil)
	body := string(readFile(t, "x12_850.edi"))
	decodeInterchange(t, b.postInterchange(t, []byte(body), "application/edi-x12"))
	_, err := b.pool.Exec(t.Context(), `UPDATE interchanges SET received_at = now() - interval '721 hours'`)
	require.NoError(t, err)
	a := decodeInterchange(t, b.postInterchange(t, []byte(strings.Replace(body, "PO-4712", "PO-4799", 1)), "application/edi-x12"))
	require.Equal(t, "accepted", a.Interchange["status"])
	require.Equal(t, "accepted", a.Messages[1]["status"])
	require.Equal(t, 1, b.count(t, `SELECT count(*) FROM interchanges`))
	require.Equal(t, 3, b.messages(t))
}

// An interchange is identified by its control number, not by an
// Idempotency-Key.
func TestInterchangeRefusesIdempotencyKey(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.messageType(t, "850", []string{"BEG.0.BEG03"}, nil)
	r := b.postInterchange(t, readFile(t, "x12_850.edi"), "application/edi-x12", "Idempotency-Key", "k1")
	require.Equal(t, http.StatusBadRequest, r.status, "%s", r.body)
	require.Equal(t, "invalid-idempotency-key", r.json(t)["type"])
	require.Equal(t, 0, b.messages(t))
}

// Many simultaneous copies of one interchange: PostgreSQL's unique index
// lets exactly one store its messages; every other copy gets the duplicate
// answer, each of its messages with its audit event.
func TestInterchangeRace(t *testing.T) {
	t.Parallel()
	b := setup(t)
	// No key paths: the docnums 0001 and 0002 alone would not block the
	// copies of a message stored by another copy, so the interchange must.
	b.messageType(t, "850", nil, nil)
	const copies = 40
	body := readFile(t, "x12_850.edi")
	responses := sendConcurrently(copies, func() response { return b.postInterchange(t, body, "application/edi-x12") })
	accepted := 0
	for _, r := range responses {
		a := decodeInterchange(t, r)
		if a.Interchange["status"] == "accepted" {
			accepted++
			for _, m := range a.Messages {
				require.Equal(t, "accepted", m["status"])
			}
		}
	}
	require.Equal(t, 1, accepted)
	require.Equal(t, 2, b.messages(t))
	require.Equal(t, 1, b.count(t, `SELECT count(*) FROM interchanges`))
	require.Equal(t, 2*(copies-1), b.count(t, `SELECT count(*) FROM audit_events
		WHERE action = 'message.duplicate_blocked' AND details->>'mode' = 'interchange'`))
}

// The answer carries the acknowledgment, a valid interchange from the
// receiver back to the sender; a repeat gets the same one; with Accept
// naming the standard's media type it is the whole body.
func TestInterchangeAcknowledgment(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.messageType(t, "850", []string{"BEG.0.BEG03"}, nil)
	b.messageType(t, "ORDERS", []string{"BGM.0.BGM02"}, nil)
	body := readFile(t, "x12_850.edi")
	var first struct{ Acknowledgment string }
	require.NoError(t, json.Unmarshal(b.postInterchange(t, body, "application/edi-x12").body, &first))
	ack, err := edi.Parse([]byte(first.Acknowledgment), edi.DefaultLimits)
	require.NoError(t, err, "%s", first.Acknowledgment)
	require.Equal(t, "ZZ:EDIHUBSELLER", ack.Sender)
	require.Equal(t, "997", ack.Messages[0].Code)
	require.Contains(t, first.Acknowledgment, "TA1*000000905*")
	require.Contains(t, first.Acknowledgment, "AK2*850*0001~\nAK5*A~\nAK2*850*0002~\nAK5*A~\nAK9*A*2*2*2~")

	r := b.postInterchange(t, body, "application/edi-x12", "Accept", "application/edi-x12")
	require.Equal(t, http.StatusOK, r.status, "%s", r.body)
	require.Equal(t, "application/edi-x12", r.header.Get("Content-Type"))
	require.Equal(t, first.Acknowledgment, string(r.body), "a repeat gets the first acknowledgment")

	r = b.postInterchange(t, readFile(t, "edifact_orders.edi"), "application/edifact", "Accept", "application/edifact")
	require.Equal(t, http.StatusOK, r.status, "%s", r.body)
	contrl, err := edi.Parse(r.body, edi.DefaultLimits)
	require.NoError(t, err, "%s", r.body)
	require.Equal(t, "CONTRL", contrl.Messages[0].Code)
	require.Contains(t, string(r.body), "UCM+M1+ORDERS:D:96A:UN+7'")
	require.Equal(t, 2, b.count(t, `SELECT count(*) FROM interchanges WHERE acknowledgment IS NOT NULL`))
}

// An EDIFACT control reference reused for other content is rejected with a
// CONTRL that says so.
func TestInterchangeEDIFACTControlNumberReused(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.messageType(t, "ORDERS", []string{"BGM.0.BGM02"}, nil)
	body := string(readFile(t, "edifact_orders.edi"))
	decodeInterchange(t, b.postInterchange(t, []byte(body), "application/edifact"))
	r := b.postInterchange(t, []byte(strings.Replace(body, "PO?+4711", "PO-4799", 1)), "application/edifact")
	require.Equal(t, http.StatusUnprocessableEntity, r.status, "%s", r.body)
	p := r.json(t)
	require.Equal(t, "interchange-control-number-reused", p["type"])
	contrl, err := edi.Parse([]byte(p["acknowledgment"].(string)), edi.DefaultLimits)
	require.NoError(t, err)
	require.Equal(t, "CONTRL", contrl.Messages[0].Code)
	require.Contains(t, p["acknowledgment"], "UCI+IC0042+5412345000013:14+4012345000009:14+4+26'")
	require.Equal(t, 1, b.messages(t))
}
