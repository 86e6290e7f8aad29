package server_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
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
	require.Equal(t, 1, b.count(t, `SELECT count(*) FROM messages WHERE payload->'BEG'->0->>'BEG03' = 'PO-4711'`))

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
	require.Equal(t, 1, b.count(t, `SELECT count(*) FROM messages WHERE payload->'BGM'->0->>'BGM02' = 'PO+4711'`))

	plain := decodeInterchange(t, b.postInterchange(t, body, "text/plain; charset=utf-8"))
	require.Equal(t, "duplicate", plain.Messages[0]["status"])
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
