package loadgen

import (
	"bytes"
	"fmt"
	"net/http"
	"slices"
	"strings"
)

// Form is how a request carries its messages.
type Form string

// The forms: a JSON envelope to receive-message, a JSON batch of envelopes
// to receive-messages, or an IDoc-XML document (a packet when it holds
// several IDocs) to receive-message.
const (
	FormEnvelope Form = "envelope"
	FormBatch    Form = "batch"
	FormPacket   Form = "packet"
)

// ParseForm checks a form name.
func ParseForm(s string) (Form, error) {
	return parseName("form", s, FormEnvelope, FormBatch, FormPacket)
}

// parseName returns s as one of the names valid, or an error naming what s
// should have been and listing them.
func parseName[T ~string](what, s string, valid ...T) (T, error) {
	if slices.Contains(valid, T(s)) {
		return T(s), nil
	}
	names := make([]string, len(valid))
	for i, v := range valid {
		names[i] = string(v)
	}
	return "", fmt.Errorf("unknown %s %q: want one of %s", what, s, strings.Join(names, ", "))
}

// bodies makes the request bodies of a run: each carries perRequest
// messages of consecutive document numbers.
type bodies struct {
	form       Form
	perRequest int
	envelope   *Document
	idoc       template // FormPacket only
}

func newBodies(form Form, perRequest, payloadSize int) bodies {
	b := bodies{form: form, perRequest: perRequest, envelope: NewDocument(payloadSize)}
	if form == FormPacket {
		b.idoc = newIDoc(payloadSize)
	}
	return b
}

func (b bodies) path() string {
	if b.form == FormBatch {
		return "/api/edi-hub/receive-messages"
	}
	return "/api/edi-hub/receive-message"
}

// contentType is what SAP's XML HTTP port sends for IDoc-XML.
func (b bodies) contentType() string {
	if b.form == FormPacket {
		return "application/x-sap.idoc"
	}
	return "application/json"
}

// build returns the body carrying the messages numbered first, first+1, ….
func (b bodies) build(first uint64) []byte {
	switch b.form {
	case FormBatch:
		out := make([]byte, 0, b.perRequest*(len(b.envelope.text)+1)+16)
		out = append(out, `{"messages":[`...)
		for i := range b.perRequest {
			if i > 0 {
				out = append(out, ',')
			}
			out = b.envelope.appendNumbered(out, first+uint64(i))
		}
		return append(out, "]}"...)
	case FormPacket:
		const head, tail = `<?xml version="1.0" encoding="UTF-8"?><ORDERS05>`, `</ORDERS05>`
		out := make([]byte, 0, len(head)+b.perRequest*len(b.idoc.text)+len(tail))
		out = append(out, head...)
		for i := range b.perRequest {
			out = b.idoc.appendNumbered(out, first+uint64(i))
		}
		return append(out, tail...)
	}
	return b.envelope.Envelope(first)
}

// checkNew checks the answer to a request whose messages are all new: 201
// for a message alone (an envelope, or a document of one IDoc), else 200
// with one accepted result per message.
func (b bodies) checkNew(status int, answer []byte, _ http.Header) error {
	if b.alone() {
		if status != http.StatusCreated {
			return fmt.Errorf("status %d, want %d: %.300s", status, http.StatusCreated, answer)
		}
		return nil
	}
	return b.checkEach(status, answer, "accepted")
}

// checkDuplicate checks the answer to a request sent again: a single
// message's as checkReplayed says, a batch's or packet's 200 with every
// message a duplicate.
func (b bodies) checkDuplicate(status int, answer []byte, header http.Header) error {
	if b.alone() {
		return checkReplayed(status, answer, header)
	}
	return b.checkEach(status, answer, "duplicate")
}

// alone says that a request carries one message and is answered as one:
// an envelope, or a packet of one IDoc.
func (b bodies) alone() bool {
	return b.form == FormEnvelope || (b.form == FormPacket && b.perRequest == 1)
}

// checkEach checks the answer to a batch or packet: 200, with every
// message's status the one given.
func (b bodies) checkEach(status int, answer []byte, want string) error {
	if status != http.StatusOK {
		return fmt.Errorf("status %d, want %d: %.300s", status, http.StatusOK, answer)
	}
	if n := bytes.Count(answer, []byte(`"status":"`+want+`"`)); n != b.perRequest {
		return fmt.Errorf("%d of %d messages %s: %.300s", n, b.perRequest, want, answer)
	}
	return nil
}

// Packet returns the IDoc-XML packet a run of FormPacket posts: n IDocs of
// at least idocSize bytes each, numbered first, first+1, …. Benchmarks of
// the parser read the same bodies the server is measured with.
func Packet(n, idocSize int, first uint64) []byte {
	return newBodies(FormPacket, n, idocSize).build(first)
}
