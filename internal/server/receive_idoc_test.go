package server_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/tidwall/gjson"
	"golang.org/x/text/encoding/charmap"

	"github.com/lefia/edihub/internal/storedview"
)

// postXML sends an IDoc-XML document to receive-message.
func (b *testBundle) postXML(t *testing.T, body []byte, contentType, query string, headers ...string) response {
	t.Helper()
	return b.postTo(t, "/api/edi-hub/receive-message"+query, body, append([]string{"Content-Type", contentType}, headers...)...)
}

// packetResults decodes a packet's or a batch's answer.
func packetResults(t *testing.T, r response) []map[string]any {
	t.Helper()
	require.Equal(t, http.StatusOK, r.status, "%s", r.body)
	var answer struct{ Messages []map[string]any }
	require.NoError(t, json.Unmarshal(r.body, &answer))
	return answer.Messages
}

type storedMessage struct {
	ID             int64
	Docnum         string
	Payload        []byte // nil when the view is rebuilt from ReceivedBytes
	ContentType    string
	ReceivedBytes  []byte
	EdiFrame       []byte
	PacketPosition *int32
	PacketSize     *int32
}

func (b *testBundle) storedMessages(t *testing.T) []storedMessage {
	t.Helper()
	rows, err := b.pool.Query(context.Background(),
		`SELECT id, docnum, payload, content_type, received_bytes, edi_frame, packet_position, packet_size FROM messages ORDER BY id`)
	require.NoError(t, err)
	defer rows.Close()
	var out []storedMessage
	for rows.Next() {
		var m storedMessage
		require.NoError(t, rows.Scan(&m.ID, &m.Docnum, &m.Payload, &m.ContentType, &m.ReceivedBytes, &m.EdiFrame,
			&m.PacketPosition, &m.PacketSize))
		out = append(out, m)
	}
	require.NoError(t, rows.Err())
	return out
}

// view is the message's JSON view, rebuilt as the admin pages rebuild it
// when it was not stored.
func (m storedMessage) view(t *testing.T) []byte {
	t.Helper()
	view, err := storedview.Stored{Payload: m.Payload, ContentType: m.ContentType, Received: m.ReceivedBytes, Frame: m.EdiFrame}.View()
	require.NoError(t, err)
	return view
}

// An IDoc sent as XML and the same IDoc sent as a JSON envelope have one
// fingerprint, so whichever comes second is the first one's duplicate.
func TestIDocXMLAndJSONBlockEachOther(t *testing.T) {
	t.Parallel()
	cases := []struct {
		code, sample string
		paths        []string
		content      string
	}{
		{"ORDERS05", "orders05", []string{"*.IDOC.E1EDK01.BELNR"}, "identical"},
		{"ORDERS05", "orders05", nil, "identical"},
		// invoic02.json holds its one E1EDP01 in an array, which XML cannot
		// express: the key paths read both alike, the content hash does not,
		// and the shape hash does again.
		{"INVOIC02", "invoic02", []string{`[*.IDOC.E1EDK02]|@flatten|#(QUALF=="001").BELNR`}, "shape_only"},
	}
	for _, tc := range cases {
		for _, xmlFirst := range []bool{true, false} {
			b := setup(t)
			b.messageType(t, tc.code, tc.paths, nil)
			asXML := readFile(t, tc.sample+".xml")
			sendXML := func() response { return b.postXML(t, asXML, "application/x-sap.idoc", "") }
			sendJSON := func() response { return b.post(t, envelopeFor(t, tc.code, tc.sample+".json")) }
			first, second := sendXML, sendJSON
			if !xmlFirst {
				first, second = sendJSON, sendXML
			}
			created := first()
			require.Equal(t, http.StatusCreated, created.status, "%s", created.body)
			dup := second()
			require.Equal(t, http.StatusOK, dup.status, "%s", dup.body)
			require.Equal(t, "true", dup.header.Get("Idempotent-Replayed"))
			require.Equal(t, true, dup.json(t)["duplicate"])
			require.Equal(t, created.json(t)["id"], dup.json(t)["duplicate_of"])
			require.Equal(t, created.json(t)["fingerprint"], dup.json(t)["fingerprint"])
			require.Equal(t, 1, b.messages(t))
			require.Equal(t, 1, b.count(t, `SELECT count(*) FROM audit_events
				WHERE action = 'message.duplicate_blocked' AND details->>'content' = $1`, tc.content), tc.sample)

			stored := b.storedMessages(t)[0]
			if xmlFirst {
				require.Equal(t, "application/x-sap.idoc", stored.ContentType)
				require.Equal(t, asXML, stored.ReceivedBytes, "the XML is stored byte for byte")
				require.Nil(t, stored.Payload, "not the view, which is rebuilt from the XML")
			} else {
				require.Equal(t, "application/json", stored.ContentType)
				require.Nil(t, stored.ReceivedBytes)
			}
		}
	}
}

func TestIDocXMLMessageType(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.messageType(t, "ORDERS05", nil, nil)
	b.messageType(t, "SALESORDER", nil, nil)
	body := readFile(t, "orders05.xml")

	r := b.postXML(t, body, "application/xml", "?message_type=SALESORDER")
	require.Equal(t, http.StatusCreated, r.status, "%s", r.body)
	require.Equal(t, "SALESORDER", r.json(t)["message_type"])
	require.Equal(t, "0000000000900101", r.json(t)["docnum"])

	// Without the parameter, the control record's IDOCTYP names the type.
	r = b.postXML(t, body, "text/xml; charset=utf-8", "")
	require.Equal(t, http.StatusCreated, r.status, "%s", r.body)
	require.Equal(t, "ORDERS05", r.json(t)["message_type"])

	r = b.postXML(t, body, "application/xml", "?message_type=DESADV01")
	requireProblem(t, r, http.StatusUnprocessableEntity, "unknown-message-type")
	require.Contains(t, r.json(t)["detail"], "DOCNUM 0000000000900101")

	noType := bytes.Replace(body, []byte("<IDOCTYP>ORDERS05</IDOCTYP>"), nil, 1)
	r = b.postXML(t, noType, "application/xml", "")
	requireProblem(t, r, http.StatusBadRequest, "invalid-payload")
	require.Contains(t, r.json(t)["detail"], "message_type")
	require.Equal(t, 2, b.messages(t))
}

func TestIDocXMLCharsets(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.messageType(t, "ORDERS05", []string{"*.IDOC.E1EDKA1.BNAME"}, nil)
	doc := func(docnum string) string {
		return `<ORDERS05><IDOC BEGIN="1"><EDI_DC40 SEGMENT="1"><DOCNUM>` + docnum + `</DOCNUM><IDOCTYP>ORDERS05</IDOCTYP></EDI_DC40>` +
			`<E1EDKA1 SEGMENT="1"><BNAME>Müller Bräu</BNAME></E1EDKA1></IDOC></ORDERS05>`
	}
	latin1, err := charmap.ISO8859_1.NewEncoder().String(`<?xml version="1.0" encoding="ISO-8859-1"?>` + doc("1"))
	require.NoError(t, err)
	r := b.postXML(t, []byte(latin1), "application/xml", "")
	require.Equal(t, http.StatusCreated, r.status, "%s", r.body)
	stored := b.storedMessages(t)[0]
	require.Equal(t, []byte(latin1), stored.ReceivedBytes)
	require.Equal(t, "Müller Bräu", gjson.GetBytes(stored.view(t), "ORDERS05.IDOC.E1EDKA1.BNAME").String(),
		"the view rebuilt in the charset the XML declares")

	// The same name in UTF-8 is the same business key.
	r = b.postXML(t, []byte(doc("2")), "application/xml; charset=UTF-8", "")
	require.Equal(t, http.StatusOK, r.status, "%s", r.body)
	require.Equal(t, true, r.json(t)["duplicate"])

	r = b.postXML(t, []byte(doc("3")), "application/xml; charset=shift_jis", "")
	requireProblem(t, r, http.StatusUnsupportedMediaType, "unsupported-media-type")
	require.Equal(t, 1, b.messages(t))
}

func TestIDocXMLRefusals(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.messageType(t, "ORDERS05", nil, nil)
	cases := []struct {
		body, problem string
	}{
		{`<ORDERS05><IDOC>`, "malformed-xml"},
		{`not xml at all`, "malformed-xml"},
		{`<ORDERS05><IDOC><EDI_DC40><DOCNUM>1</DOCNUM></EDI_DC40><X>&xxe;</X></IDOC></ORDERS05>`, "malformed-xml"},
		{`<?xml version="1.0"?><!DOCTYPE ORDERS05 [<!ENTITY xxe SYSTEM "file:///etc/passwd">]>` +
			`<ORDERS05><IDOC><EDI_DC40><DOCNUM>1</DOCNUM></EDI_DC40><X>&xxe;</X></IDOC></ORDERS05>`, "invalid-payload"},
		{`<ORDERS05/>`, "invalid-payload"},
		{`<html><body>hello</body></html>`, "invalid-payload"},
		{`<ORDERS05><IDOC><E1EDK01/></IDOC></ORDERS05>`, "invalid-payload"},
		// A DOCNUM follows the rule of every identifier: no control or
		// bidirectional characters (here NEL and U+202E, as XML references).
		{`<ORDERS05><IDOC><EDI_DC40><DOCNUM>1&#x85;2</DOCNUM><IDOCTYP>ORDERS05</IDOCTYP></EDI_DC40></IDOC></ORDERS05>`, "invalid-field"},
		{`<ORDERS05><IDOC><EDI_DC40><DOCNUM>1&#x202e;2</DOCNUM><IDOCTYP>ORDERS05</IDOCTYP></EDI_DC40></IDOC></ORDERS05>`, "invalid-field"},
	}
	for _, tc := range cases {
		r := b.postXML(t, []byte(tc.body), "application/xml", "")
		requireProblem(t, r, http.StatusBadRequest, tc.problem)
	}
	require.Equal(t, 0, b.messages(t))
}

// A packet is one message per IDoc, decided in one transaction in
// document order; its resending answers every IDoc as a duplicate.
func TestIDocPacket(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.messageType(t, "ORDERS05", nil, nil) // the docnum is the key: three IDocs, three messages
	packet := readFile(t, "orders05_packet.xml")
	docnums := []string{"0000000000900101", "0000000000900177", "0000000000900178"}

	results := packetResults(t, b.postXML(t, packet, "application/x-sap.idoc", ""))
	require.Len(t, results, 3)
	for i, r := range results {
		require.Equal(t, "accepted", r["status"])
		require.Equal(t, docnums[i], r["docnum"])
	}
	stored := b.storedMessages(t)
	require.Len(t, stored, 3)
	for i, m := range stored {
		require.Equal(t, docnums[i], m.Docnum, "document order")
		require.Equal(t, int32(i+1), *m.PacketPosition)
		require.Equal(t, int32(3), *m.PacketSize)
		require.Equal(t, "application/x-sap.idoc", m.ContentType)
		// Each IDoc keeps the packet's own bytes: what precedes the first
		// IDoc, itself, and what follows the last.
		require.True(t, bytes.HasPrefix(m.ReceivedBytes, []byte("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<ORDERS05>\n  <IDOC BEGIN=\"1\">")))
		require.True(t, bytes.HasSuffix(m.ReceivedBytes, []byte("</IDOC>\n</ORDERS05>\n")))
		require.Contains(t, string(m.ReceivedBytes), "<DOCNUM>"+docnums[i]+"</DOCNUM>")
		require.Equal(t, 1, bytes.Count(m.ReceivedBytes, []byte("<DOCNUM>")))
		require.Contains(t, string(packet), idocOf(t, m.ReceivedBytes), "the IDoc's bytes are the packet's")
	}
	require.Equal(t, readFile(t, "orders05.xml"), stored[0].ReceivedBytes)

	resent := b.postXML(t, packet, "application/x-sap.idoc", "")
	require.Empty(t, resent.header.Get("Idempotent-Replayed"), "the packet as a whole is no replay")
	for i, r := range packetResults(t, resent) {
		require.Equal(t, true, r["duplicate"])
		require.Equal(t, float64(stored[i].ID), r["duplicate_of"])
	}
	require.Equal(t, 3, b.messages(t))
	// One event per blocked IDoc, naming the request and the IDoc's place.
	require.Equal(t, 3, b.blockedEvents(t))
	events := b.blockedIn(t, resent)
	require.Len(t, events, 3)
	for i, e := range events {
		require.Equal(t, blockedEvent{Position: i + 1, Mode: "fingerprint", OriginalID: stored[i].ID, Content: "identical"}, e)
	}
}

// blockedEvent is what a message.duplicate_blocked event says about one
// blocked message of a request.
type blockedEvent struct {
	Position   int // its place in the packet or batch; 0 when it came alone
	Mode       string
	OriginalID int64
	Content    string
}

// blockedIn lists the message.duplicate_blocked events of the request that
// got r, found by its X-Request-Id, in the order they were written.
func (b *testBundle) blockedIn(t *testing.T, r response) []blockedEvent {
	t.Helper()
	requestID := r.header.Get("X-Request-Id")
	require.NotEmpty(t, requestID)
	rows, err := b.pool.Query(context.Background(), `SELECT coalesce((details->'source'->>'position')::int, 0),
		details->>'mode', message_id, details->>'content'
		FROM audit_events WHERE action = 'message.duplicate_blocked' AND details->'source'->>'request_id' = $1 ORDER BY id`, requestID)
	require.NoError(t, err)
	defer rows.Close()
	var events []blockedEvent
	for rows.Next() {
		var e blockedEvent
		require.NoError(t, rows.Scan(&e.Position, &e.Mode, &e.OriginalID, &e.Content))
		events = append(events, e)
	}
	require.NoError(t, rows.Err())
	return events
}

// With the business key as the fingerprint, the packet's repeat output and
// changed copy are duplicates of its first IDoc, decided inside the packet.
func TestIDocPacketDuplicatesWithin(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.messageType(t, "ORDERS05", []string{"*.IDOC.E1EDK01.BELNR"}, nil)
	results := packetResults(t, b.postXML(t, readFile(t, "orders05_packet.xml"), "application/xml", ""))
	require.Equal(t, "accepted", results[0]["status"])
	for _, r := range results[1:] {
		require.Equal(t, true, r["duplicate"])
		require.Equal(t, results[0]["id"], r["duplicate_of"])
	}
	require.Equal(t, 1, b.messages(t))
	require.Equal(t, 2, b.blockedEvents(t))

	// A packet holding one IDoc twice stores it once.
	b2 := setup(t)
	b2.messageType(t, "ORDERS05", nil, nil)
	twice := packetOf(t, idocOf(t, readFile(t, "orders05.xml")), idocOf(t, readFile(t, "orders05.xml")))
	results = packetResults(t, b2.postXML(t, twice, "application/xml", ""))
	require.Equal(t, "accepted", results[0]["status"])
	require.Equal(t, true, results[1]["duplicate"])
	require.Equal(t, 1, b2.messages(t))
}

// idocOf cuts the IDOC element out of a one-IDoc sample.
func idocOf(t *testing.T, doc []byte) string {
	t.Helper()
	s := string(doc)
	start, end := strings.Index(s, "<IDOC "), strings.LastIndex(s, "</IDOC>")
	require.True(t, start >= 0 && end > start)
	return s[start : end+len("</IDOC>")]
}

// packetOf makes an ORDERS05 document of the IDOC elements given.
func packetOf(t *testing.T, idocs ...string) []byte {
	t.Helper()
	return []byte("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<ORDERS05>\n" + strings.Join(idocs, "\n") + "\n</ORDERS05>\n")
}

// withDocnum is an IDOC element with another DOCNUM.
func withDocnum(idoc, docnum string) string {
	start := strings.Index(idoc, "<DOCNUM>") + len("<DOCNUM>")
	end := strings.Index(idoc, "</DOCNUM>")
	return idoc[:start] + docnum + idoc[end:]
}

// One IDoc that cannot be accepted refuses the whole packet and stores
// nothing, naming its position and DOCNUM.
func TestIDocPacketAllOrNothing(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.messageType(t, "ORDERS05", nil, nil)
	good := idocOf(t, readFile(t, "orders05.xml"))
	noControl := `<IDOC BEGIN="1"><E1EDK01 SEGMENT="1"><BELNR>1</BELNR></E1EDK01></IDOC>`
	r := b.postXML(t, packetOf(t, good, withDocnum(good, "77"), noControl), "application/xml", "")
	requireProblem(t, r, http.StatusBadRequest, "invalid-payload")
	require.Contains(t, r.json(t)["detail"], "IDoc 3")

	otherType := strings.Replace(withDocnum(good, "78"), "<IDOCTYP>ORDERS05</IDOCTYP>", "<IDOCTYP>DESADV01</IDOCTYP>", 1)
	r = b.postXML(t, packetOf(t, good, otherType), "application/xml", "")
	requireProblem(t, r, http.StatusUnprocessableEntity, "unknown-message-type")
	require.Contains(t, r.json(t)["detail"], "IDoc 2 of 2 (DOCNUM 78)")
	require.Equal(t, 0, b.messages(t))
}

// An Idempotency-Key names the whole packet.
func TestIDocPacketIdempotencyKey(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.messageType(t, "ORDERS05", []string{"*.IDOC.E1EDK01.BELNR"}, nil)
	packet := readFile(t, "orders05_packet.xml")
	first := b.postXML(t, packet, "application/xml", "", "Idempotency-Key", "packet-1")
	results := packetResults(t, first)
	require.Len(t, results, 3)
	for _, r := range results {
		require.Equal(t, "accepted", r["status"], "under a key no fingerprint blocks")
	}
	replay := b.postXML(t, packet, "application/xml", "", "Idempotency-Key", "packet-1")
	require.Equal(t, http.StatusOK, replay.status)
	require.Equal(t, "true", replay.header.Get("Idempotent-Replayed"))
	require.JSONEq(t, string(first.body), string(replay.body))
	require.Equal(t, 3, b.messages(t))
	// The replay blocked every IDoc of the packet: one event each, against
	// the message that IDoc stored the first time.
	events := b.blockedIn(t, replay)
	require.Len(t, events, 3)
	for i, e := range events {
		require.Equal(t, blockedEvent{Position: i + 1, Mode: "idempotency_key", OriginalID: int64(results[i]["id"].(float64)),
			Content: "identical"}, e)
	}
	require.Equal(t, 3, b.count(t, `SELECT count(*) FROM messages WHERE idempotency_key = 'packet-1' AND fingerprint IS NULL`))

	one := idocOf(t, readFile(t, "orders05.xml"))
	for _, other := range [][]byte{packetOf(t, one), packetOf(t, one, withDocnum(one, "99"))} {
		r := b.postXML(t, other, "application/xml", "", "Idempotency-Key", "packet-1")
		requireProblem(t, r, http.StatusUnprocessableEntity, "idempotency-key-reused")
	}
	require.Equal(t, 3, b.messages(t))
	require.Equal(t, 3, b.blockedEvents(t), "a refused reuse blocks nothing")
}

// Admins see an IDoc's received bytes, in their charset, beside the JSON
// view its paths read, and can download the bytes exactly.
func TestMessagePageShowsReceivedIDocXML(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.messageType(t, "ORDERS05", []string{"*.IDOC.E1EDK01.BELNR"}, nil)
	idoc := idocOf(t, readFile(t, "orders05.xml"))
	second := strings.ReplaceAll(withDocnum(idoc, "0000000000900177"), "4500012345", "4500099999")
	second = strings.Replace(second, "Purchasing Group 210", "Einkauf &lt;Süd&gt; &amp; Co", 1)
	packet, err := charmap.ISO8859_1.NewEncoder().Bytes(packetOf(t, idoc, second))
	require.NoError(t, err)
	packet = bytes.Replace(packet, []byte(`encoding="UTF-8"`), []byte(`encoding="ISO-8859-1"`), 1)
	results := packetResults(t, b.postXML(t, packet, "application/x-sap.idoc", ""))
	require.Len(t, results, 2)
	id := int64(results[1]["id"].(float64))

	c := b.client(t)
	c.login(b.user(t, "viewer@acme.example", "viewer", "acme"))
	page := string(c.get(fmt.Sprintf("/admin/messages/%d", id)).body)
	require.Contains(t, page, "<code>application/x-sap.idoc</code>")
	require.Contains(t, page, "IDoc 2 of 2 in one document")
	require.Contains(t, page, "&lt;BNAME&gt;Einkauf &amp;lt;Süd&amp;gt; &amp;amp; Co&lt;/BNAME&gt;", "the XML as received, escaped")
	require.Contains(t, page, "<h2>JSON view</h2>")
	require.Contains(t, page, `<mark title="*.IDOC.E1EDK01.BELNR">&#34;4500099999&#34;</mark>`)

	download := requireXMLDownload(t, c, fmt.Sprintf("/admin/messages/%d/received", id))
	stored := b.storedMessages(t)[1]
	require.Equal(t, stored.ReceivedBytes, download.body)
	require.Nil(t, stored.Payload, "the view shown was rebuilt from the ISO-8859-1 bytes")
	require.Contains(t, string(stored.view(t)), `"BNAME":"Einkauf <Süd> & Co"`)
	require.Contains(t, string(packet), idocOf(t, download.body), "byte for byte, ISO-8859-1 as sent")
}

// requireXMLDownload checks that path offers bytes received from SAP's XML
// HTTP port for download, with their content type, and returns them.
func requireXMLDownload(t *testing.T, c *adminClient, path string) response {
	t.Helper()
	download := c.get(path)
	require.Equal(t, http.StatusOK, download.status)
	require.Equal(t, "application/x-sap.idoc", download.header.Get("Content-Type"))
	require.Contains(t, download.header.Get("Content-Disposition"), "attachment")
	return download
}

// SAP's HTTP destinations send Basic credentials: the API key is the
// password, whatever the user name.
func TestIDocXMLBasicAuth(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.messageType(t, "ORDERS05", nil, nil)
	send := func(user, password string) response {
		req, err := http.NewRequest(http.MethodPost, b.url+"/api/edi-hub/receive-message", bytes.NewReader(readFile(t, "orders05.xml")))
		require.NoError(t, err)
		req.SetBasicAuth(user, password)
		return do(t, http.MethodPost, req.URL.String(), http.Header{
			"Authorization": {req.Header.Get("Authorization")}, "Content-Type": {"application/x-sap.idoc"},
		}, readFile(t, "orders05.xml"))
	}
	require.Equal(t, http.StatusUnauthorized, send("edihub", "wrong").status)
	require.Equal(t, http.StatusUnauthorized, send(b.apiKey, "").status)
	require.Equal(t, http.StatusCreated, send("SAPQ01", b.apiKey).status)
	require.Equal(t, 1, b.messages(t))
}

// A blocked copy of an IDoc that arrived as XML keeps its bytes beside its
// JSON view, as a stored message does, and the page shows both; released,
// the message it becomes keeps them too.
func TestBlockedIDocCopyKeepsItsXML(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.messageType(t, "ORDERS05", []string{"*.IDOC.E1EDK01.BELNR"}, nil)
	idoc := idocOf(t, readFile(t, "orders05.xml"))
	changed := strings.Replace(withDocnum(idoc, "0000000000900179"), "Purchasing Group 210", "Einkauf Süd", 1)
	results := packetResults(t, b.postXML(t, packetOf(t, idoc, changed), "application/x-sap.idoc", ""))
	require.Equal(t, true, results[1]["duplicate"], "the same order number, changed")
	var copyID int64
	var kept []byte
	require.NoError(t, b.pool.QueryRow(context.Background(), `SELECT id, received_bytes FROM blocked_copies
		WHERE content_type = 'application/x-sap.idoc' AND packet_position = 2 AND packet_size = 2
		  AND payload IS NULL`).Scan(&copyID, &kept), "kept without its view, as a message is")
	require.Equal(t, 1, bytes.Count(kept, []byte("<IDOC ")))
	require.Contains(t, string(kept), idocOf(t, []byte(changed)), "the copy's own IDoc, byte for byte")

	c := b.client(t)
	c.login(b.user(t, "admin@acme.example", "admin", "acme"))
	page := string(c.get(fmt.Sprintf("/admin/blocked/%d", copyID)).body)
	require.Contains(t, page, "<code>application/x-sap.idoc</code>")
	require.Contains(t, page, "IDoc 2 of 2 in one document")
	require.Contains(t, page, "&lt;BNAME&gt;Einkauf Süd&lt;/BNAME&gt;", "the XML as received, escaped")
	require.Contains(t, page, "<h2>JSON view of this copy</h2>")
	require.Contains(t, page, `&#34;BNAME&#34;: &#34;Einkauf Süd&#34;`, "the JSON view, pretty-printed")
	require.Contains(t, page, `<td class="path"><code>/ORDERS05/IDOC/EDI_DC40/DOCNUM</code></td>`, "the diff compares the views")

	require.Equal(t, kept, requireXMLDownload(t, c, fmt.Sprintf("/admin/blocked/%d/received", copyID)).body)

	resp := c.submit(fmt.Sprintf("/admin/blocked/%d/release", copyID), url.Values{"reason": {"a second order after all"}})
	require.Equal(t, http.StatusSeeOther, resp.status, "%s", resp.body)
	released := b.storedMessages(t)[1]
	require.Equal(t, "0000000000900179", released.Docnum)
	require.Equal(t, "application/x-sap.idoc", released.ContentType)
	require.Equal(t, kept, released.ReceivedBytes)
	require.Equal(t, int32(2), *released.PacketPosition)
	require.Equal(t, int32(2), *released.PacketSize)
	require.Contains(t, string(c.get(resp.header.Get("Location")).body), "<code>application/x-sap.idoc</code>")

	// A copy that arrived as JSON shows its payload, and its download is
	// that payload, exactly as received.
	require.Equal(t, http.StatusOK, b.post(t, envelopeFor(t, "ORDERS05", "orders05_changed_content_same_belnr.json")).status)
	var jsonCopy int64
	var payload string
	require.NoError(t, b.pool.QueryRow(context.Background(),
		`SELECT id, payload::text FROM blocked_copies WHERE content_type = 'application/json' AND received_bytes IS NULL`).Scan(&jsonCopy, &payload))
	page = string(c.get(fmt.Sprintf("/admin/blocked/%d", jsonCopy)).body)
	require.Contains(t, page, "<h2>Payload of this copy</h2>")
	require.NotContains(t, page, `id="received"`)
	require.Contains(t, page, fmt.Sprintf(`<a id="copy-payload-download" href="/admin/blocked/%d/received" download>`, jsonCopy))
	download := c.get(fmt.Sprintf("/admin/blocked/%d/received", jsonCopy))
	require.Equal(t, http.StatusOK, download.status)
	require.Equal(t, "application/json", download.header.Get("Content-Type"))
	require.Equal(t, fmt.Sprintf(`attachment; filename="blocked-copy-%d.json"`, jsonCopy), download.header.Get("Content-Disposition"))
	require.Equal(t, payload, string(download.body))
}
