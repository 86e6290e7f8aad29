package loadgen

import (
	"bytes"
	"fmt"
	"net/http"
	"slices"
	"strings"

	"github.com/tidwall/gjson"
)

// Form is how a request carries its messages.
type Form string

// The forms: a JSON envelope to receive-message, a JSON batch of envelopes
// to receive-messages, an IDoc-XML document (a packet when it holds
// several IDocs) to receive-message, or an X12 or EDIFACT interchange of
// orders to receive-message.
const (
	FormEnvelope Form = "envelope"
	FormBatch    Form = "batch"
	FormPacket   Form = "packet"
	FormX12      Form = "x12"
	FormEDIFACT  Form = "edifact"
)

// ParseForm checks a form name.
func ParseForm(s string) (Form, error) {
	return parseName("form", s, FormEnvelope, FormBatch, FormPacket, FormX12, FormEDIFACT)
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
	idoc       template    // FormPacket only
	ic         interchange // FormX12 and FormEDIFACT only
	run        uint64      // names the run's interchange senders
}

// numbers are what a request's body is numbered by: the first document
// number it carries and, for an interchange, the client that sends it (a
// sender of its own) and the interchange's control number, that client's
// count of its interchanges, so that each sender's numbers run in sequence
// as a trading partner's do.
type numbers struct {
	first   uint64
	client  int
	control uint64
}

func newBodies(form Form, perRequest, payloadSize int, run uint64) bodies {
	b := bodies{form: form, perRequest: perRequest, envelope: NewDocument(payloadSize), run: run}
	switch form {
	case FormPacket:
		b.idoc = newIDoc(payloadSize)
	case FormX12, FormEDIFACT:
		b.ic = newInterchange(form, payloadSize)
	}
	return b
}

func (b bodies) path() string {
	if b.form == FormBatch {
		return "/api/edi-hub/receive-messages"
	}
	return "/api/edi-hub/receive-message"
}

// contentType is what SAP's XML HTTP port sends for IDoc-XML, and the
// media types of RFC 1767 for interchanges.
func (b bodies) contentType() string {
	switch b.form {
	case FormPacket:
		return "application/x-sap.idoc"
	case FormX12:
		return "application/edi-x12"
	case FormEDIFACT:
		return "application/edifact"
	}
	return "application/json"
}

// build returns the body carrying the messages numbered n.first,
// n.first+1, ….
func (b bodies) build(n numbers) []byte {
	first := n.first
	switch b.form {
	case FormX12, FormEDIFACT:
		return b.ic.appendInterchange(make([]byte, 0, 256+b.perRequest*(len(b.ic.set.text)+32)), n, b.perRequest, b.run)
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
// with one accepted result per message, and an interchange accepted.
func (b bodies) checkNew(status int, answer []byte, _ http.Header) error {
	if b.isInterchange() {
		return b.checkInterchange(status, answer, "accepted")
	}
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
// message a duplicate, an interchange's the first answer replayed.
func (b bodies) checkDuplicate(status int, answer []byte, header http.Header) error {
	if b.isInterchange() {
		if header.Get("Idempotent-Replayed") != "true" {
			return fmt.Errorf("status %d without Idempotent-Replayed: %.300s", status, answer)
		}
		return b.checkInterchange(status, answer, "duplicate")
	}
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

// isInterchange says that each request is an X12 or EDIFACT interchange,
// answered with the interchange's status beside its sets' receipts.
func (b bodies) isInterchange() bool { return b.form == FormX12 || b.form == FormEDIFACT }

// checkInterchange checks the answer to an interchange: 200, the
// interchange's status the one given, and every set accepted, which a
// duplicate's answer repeats from the first.
func (b bodies) checkInterchange(status int, answer []byte, want string) error {
	if status != http.StatusOK {
		return fmt.Errorf("status %d, want %d: %.300s", status, http.StatusOK, answer)
	}
	if got := gjson.GetBytes(answer, "interchange.status").Str; got != want {
		return fmt.Errorf("interchange %q, want %q: %.300s", got, want, answer)
	}
	// The sets' receipts are counted as a batch's are, in the answer's
	// messages, which come after the interchange's own status: half the
	// client's time of parsing them (BenchmarkCheckInterchange), time the
	// machine the rows measure shares.
	messages := bytes.Index(answer, []byte(`"messages":[`))
	if messages < 0 {
		return fmt.Errorf("no messages: %.300s", answer)
	}
	if n := receipts(answer[messages:], "accepted"); n != b.perRequest {
		return fmt.Errorf("%d of %d sets accepted: %.300s", n, b.perRequest, answer)
	}
	return nil
}

// checkEach checks the answer to a batch or packet: 200, with every
// message's status the one given.
func (b bodies) checkEach(status int, answer []byte, want string) error {
	if status != http.StatusOK {
		return fmt.Errorf("status %d, want %d: %.300s", status, http.StatusOK, answer)
	}
	if n := receipts(answer, want); n != b.perRequest {
		return fmt.Errorf("%d of %d messages %s: %.300s", n, b.perRequest, want, answer)
	}
	return nil
}

// receipts counts the receipts of the given status in answer.
func receipts(answer []byte, status string) int {
	return bytes.Count(answer, []byte(`"status":"`+status+`"`))
}

// Packet returns the IDoc-XML packet a run of FormPacket posts: n IDocs of
// at least idocSize bytes each, numbered first, first+1, …. Benchmarks of
// the parser read the same bodies the server is measured with.
func Packet(n, idocSize int, first uint64) []byte {
	return newBodies(FormPacket, n, idocSize, 0).build(numbers{first: first})
}

// Interchange returns the interchange a run of FormX12 or FormEDIFACT
// posts: n messages of at least size bytes each, numbered first, first+1,
// …, under the control number control.
func Interchange(form Form, n, size int, first, control uint64) []byte {
	return newBodies(form, n, size, 0).build(numbers{first: first, control: control})
}
