// Package edi reads X12 and EDIFACT interchanges: it checks their envelopes
// (separators, counts and control numbers of every trailer, the declared
// character set) and turns each X12 transaction set or EDIFACT message into
// one message with its JSON view, the form key paths, fingerprints and
// content hashes read.
//
// The JSON view of a message is an object whose members are segment ids,
// each an array of that segment's occurrences in order. An occurrence is an
// object of its elements, named by segment id and two-digit position (BEG03,
// BGM02); an element with components is an array of its components, one
// without a string; empty trailing elements are left out. Beside the
// segments, the member "interchange" describes the envelope the message
// came in.
//
// The parser holds the body, each message's view and, per message, slices
// of the body: memory grows with the body, whose size the caller bounds,
// and the number of messages is bounded by Limits.MaxMessages.
package edi

import (
	"bytes"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/lefia/edihub/internal/viewmem"
)

// The standards an interchange may follow, as the answer and the view name
// them.
const (
	X12     = "x12"
	EDIFACT = "edifact"
)

// Limits bounds what one interchange may hold.
type Limits struct {
	// MaxMessages is the most transaction sets or messages one interchange
	// may carry; more is a *TooManyMessagesError.
	MaxMessages int
}

// DefaultLimits are the limits of a server with default configuration.
var DefaultLimits = Limits{MaxMessages: 1000}

// Interchange is one X12 or EDIFACT interchange, checked.
type Interchange struct {
	Standard string // X12 or EDIFACT
	// Sender and Receiver are QUALIFIER:ID (ISA05:ISA06, ISA07:ISA08; UNB
	// 0007:0004, 0008:0010), the identifiers trimmed of X12's padding.
	Sender, Receiver string
	ControlNumber    string // ISA13, UNB 0020
	// Version is the interchange's syntax version: ISA12 (00401), or UNB's
	// syntax identifier and version (UNOC:3).
	Version string
	// AckRequested is true when ISA14 is 1 (the sender asks for a TA1).
	AckRequested bool
	// Test is true for a test interchange (ISA15 T, UNB 0035 1).
	Test bool
	// ContentHash is the SHA-256 of the interchange's segments, each with
	// its terminator, leaving out line breaks between segments: the same
	// interchange sent again with other line breaks has the same hash.
	ContentHash [32]byte
	Groups      []Group
	Messages    []Message
	// env is what an acknowledgment repeats of the envelope.
	env envelopeFields
	// views holds the memory of the messages' views and canonical forms.
	views viewmem.Memory
}

// Release gives the memory of ic's views and canonical forms back to be
// written over by later interchanges, and clears them from ic.Messages: a
// caller that is done with them, its messages stored, calls it so that the
// next interchange reuses the memory rather than allocating its own. An
// interchange that is not released is collected as any value is.
func (ic *Interchange) Release() {
	for i := range ic.Messages {
		m := &ic.Messages[i]
		m.View, m.Canonical = nil, nil
	}
	ic.views.Release()
}

// envelopeFields are the parts of an interchange's header an
// acknowledgment sends back.
type envelopeFields struct {
	senderQualifier, senderID, receiverQualifier, receiverID string
	date, time                                               string // ISA09 and ISA10, UNB 0017 and 0019
	syntax                                                   string // UNB 0001:0002
	// The X12 separators, which the acknowledgment uses again: the data
	// of the interchange cannot hold them.
	element, component, terminator byte
}

// Group is an X12 functional group (GS…GE) or an EDIFACT group (UNG…UNE).
// An EDIFACT interchange without groups has one Group of no control number.
type Group struct {
	ID string // GS01 (PO, IN), UNG 0038
	// AppSender and AppReceiver are GS02 and GS03, which a 997's GS swaps.
	AppSender, AppReceiver string
	ControlNumber          string // GS06, UNG 0048; "" for EDIFACT messages outside a group
	Version                string // GS08 (004010), UNG's message version
	Messages               int    // how many of the interchange's messages it holds
}

// Message is one transaction set (ST…SE) or EDIFACT message (UNH…UNT).
type Message struct {
	Position int    // 1 for the interchange's first message
	Group    int    // index into Interchange.Groups
	Code     string // ST01 (850), UNH 0065 (ORDERS)
	Docnum   string // ST02, UNH 0062
	Version  string // GS08 of its group, or UNH 0052:0054 (D:96A)
	// View is the message's JSON view (see the package comment).
	// Canonical is the same view in its RFC 8785 canonical form, what
	// canon.Canonicalise would make of View; nil for a view that holds a
	// tab, line break, backspace or form feed, or a segment of more than 99
	// elements, and past the first MiB of an interchange's canonical forms,
	// which the reader leaves to canon.
	View, Canonical []byte
	// Bytes are the message's own segments as received, from ST or UNH
	// to SE or UNT with its terminator.
	Bytes []byte
	// Frame is what, beside Bytes, View is made of (the interchange's
	// delimiters, character set and envelope): ViewOf(Bytes, Frame) is View.
	// Messages of one group share it.
	Frame []byte
}

// MalformedError says which segment breaks the interchange's structure.
type MalformedError struct {
	Segment  string // the segment's id ("" when it has none)
	Position int    // 1 for the interchange's first segment
	Element  string // the element at fault (SE01), or ""
	Reason   string
}

func (e *MalformedError) Error() string {
	at := fmt.Sprintf("segment %d", e.Position)
	if e.Segment != "" {
		at += " (" + e.Segment + ")"
	}
	if e.Element != "" {
		at += ", element " + e.Element
	}
	return at + ": " + e.Reason
}

// TooManyMessagesError refuses an interchange of more than Max messages.
type TooManyMessagesError struct{ Max int }

func (e *TooManyMessagesError) Error() string {
	return fmt.Sprintf("the interchange holds more than %d messages", e.Max)
}

// ErrNotInterchange is returned for a body that starts with neither ISA,
// UNA nor UNB.
var ErrNotInterchange = errors.New("the body is not an X12 or EDIFACT interchange: it starts with neither ISA, UNA nor UNB")

// LooksLikeInterchange tells whether body starts as an interchange does,
// after any leading white space.
func LooksLikeInterchange(body []byte) bool {
	b := trimLeading(body)
	return bytes.HasPrefix(b, []byte("ISA")) || bytes.HasPrefix(b, []byte("UNA")) || bytes.HasPrefix(b, []byte("UNB"))
}

// Parse reads and checks one interchange.
func Parse(body []byte, limits Limits) (*Interchange, error) {
	b := trimLeading(body)
	switch {
	case bytes.HasPrefix(b, []byte("ISA")):
		return parseX12(b, limits)
	case bytes.HasPrefix(b, []byte("UNA")), bytes.HasPrefix(b, []byte("UNB")):
		return parseEDIFACT(b, limits)
	}
	return nil, ErrNotInterchange
}

// trimLeading drops a UTF-8 byte order mark and white space before the
// first segment.
func trimLeading(b []byte) []byte {
	b = bytes.TrimPrefix(b, []byte("\xef\xbb\xbf"))
	return bytes.TrimLeft(b, " \t\r\n")
}

// segment is one segment: its elements (the id first), each a list of
// components, already unescaped and in UTF-8, its place in the
// interchange, and its bytes as received, without its terminator. Only the
// segments of the envelopes are split so; the others go to the view as
// they are (viewBuilder.add).
type segment struct {
	id       string
	elements [][]string
	position int
	raw      []byte
}

func (s *segment) malformed(element int, format string, args ...any) *MalformedError {
	e := &MalformedError{Segment: s.id, Position: s.position, Reason: fmt.Sprintf(format, args...)}
	if element > 0 {
		e.Element = elementName(s.id, element)
	}
	return e
}

// element is the simple value at position i (1 for the first data element),
// its components joined by sep: "" when absent.
func (s *segment) element(i int) string {
	if i >= len(s.elements) {
		return ""
	}
	return strings.Join(s.elements[i], ":")
}

// component is component j (0 for the first) of element i, "" when absent.
func (s *segment) component(i, j int) string {
	if i >= len(s.elements) || j >= len(s.elements[i]) {
		return ""
	}
	return s.elements[i][j]
}

func elementName(id string, i int) string {
	return fmt.Sprintf("%s%02d", id, i)
}

// appendString writes s, valid UTF-8, as a JSON string.
func appendString(b []byte, s string) []byte {
	b = append(b, '"')
	for i := 0; i < len(s); i++ {
		b = appendChar(b, s[i])
	}
	return append(b, '"')
}

// appendChar writes c, a byte of valid UTF-8 text, inside a JSON string:
// quotes and backslashes escaped, control characters as \u00XX.
func appendChar(b []byte, c byte) []byte {
	const hex = "0123456789abcdef"
	switch {
	case c == '"' || c == '\\':
		return append(b, '\\', c)
	case c < 0x20:
		return append(b, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xf])
	}
	return append(b, c)
}

// canonicalString tells whether appendString writes s as RFC 8785 does:
// unless it holds a backspace, tab, line feed, form feed or carriage
// return, which that form writes as \b, \t, \n, \f and \r.
func canonicalString(s string) bool {
	for i := 0; i < len(s); i++ {
		if !canonicalChar(s[i]) {
			return false
		}
	}
	return true
}

func canonicalChar(c byte) bool {
	return c != '\b' && c != '\t' && c != '\n' && c != '\f' && c != '\r'
}

// envelopeOrder is the spec's order of the envelope's members, in a
// message's view and in the answer; canonicalEnvelopeOrder is RFC 8785's,
// the same names sorted.
var (
	envelopeOrder          = []string{"standard", "sender", "receiver", "control_number", "group_control_number", "version"}
	canonicalEnvelopeOrder = []string{"control_number", "group_control_number", "receiver", "sender", "standard", "version"}
)

// envelopeJSON is the "interchange" member of a message's view, and of the
// answer: the fields of the spec in a fixed order.
func envelopeJSON(standard, sender, receiver, control, group, version string) []byte {
	return writeEnvelope(envelopeOrder, standard, sender, receiver, control, group, version)
}

// envelopeCanonical is envelopeJSON's object in its RFC 8785 canonical
// form, its members sorted, or nil when one of its values holds a
// character appendString escapes otherwise than that form does.
func envelopeCanonical(standard, sender, receiver, control, group, version string) []byte {
	for _, s := range []string{standard, sender, receiver, control, group, version} {
		if !canonicalString(s) {
			return nil
		}
	}
	return writeEnvelope(canonicalEnvelopeOrder, standard, sender, receiver, control, group, version)
}

// writeEnvelope writes the envelope's members in order; a group control
// number of "" (EDIFACT without groups) is null.
func writeEnvelope(order []string, standard, sender, receiver, control, group, version string) []byte {
	values := map[string]string{
		"standard": standard, "sender": sender, "receiver": receiver,
		"control_number": control, "group_control_number": group, "version": version,
	}
	b := []byte{'{'}
	for i, name := range order {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(appendString(b, name), ':')
		if name == "group_control_number" && group == "" {
			b = append(b, "null"...)
		} else {
			b = appendString(b, values[name])
		}
	}
	return append(b, '}')
}

// countIs checks that element i of s, a count, equals want.
func countIs(s *segment, i, want int, what string) error {
	v := s.element(i)
	n, err := strconv.Atoi(v)
	if err != nil || n < 0 {
		return s.malformed(i, "the count %q is not a number", v)
	}
	if n != want {
		return s.malformed(i, "the count %d does not match the %d %s", n, want, what)
	}
	return nil
}

// controlIs checks that element i of s repeats the control number of the
// segment that opened it.
func controlIs(s *segment, i int, want, opener string) error {
	if got := s.element(i); got != want {
		return s.malformed(i, "the control number %q does not match %s's %q", got, opener, want)
	}
	return nil
}

// checkUTF8 refuses text that is not valid UTF-8, or holds a NUL byte,
// which no stored text can carry.
func checkUTF8(s *segment, text []byte, charset string) error {
	if !utf8.Valid(text) {
		return s.malformed(0, "the segment is not valid %s", charset)
	}
	if bytes.IndexByte(text, 0) >= 0 {
		return s.malformed(0, "the segment holds a NUL byte")
	}
	return nil
}

// syntaxID is the syntax identifier of UNB's S001 (UNOC), "" for X12.
func (e envelopeFields) syntaxID() string {
	id, _, _ := strings.Cut(e.syntax, ":")
	return id
}

// AnswerJSON is the interchange member of the answer to ic: its envelope,
// status ("accepted" or "duplicate") and, for a duplicate, the id of the
// interchange it repeats.
func AnswerJSON(ic *Interchange, status string, duplicateOf *int64) []byte {
	var b []byte
	b = append(b, `{"standard":`...)
	b = appendString(b, ic.Standard)
	b = append(b, `,"sender":`...)
	b = appendString(b, ic.Sender)
	b = append(b, `,"receiver":`...)
	b = appendString(b, ic.Receiver)
	b = append(b, `,"control_number":`...)
	b = appendString(b, ic.ControlNumber)
	b = append(b, `,"version":`...)
	b = appendString(b, ic.Version)
	b = append(b, `,"messages":`...)
	b = strconv.AppendInt(b, int64(len(ic.Messages)), 10)
	b = append(b, `,"status":`...)
	b = appendString(b, status)
	b = append(b, `,"duplicate_of":`...)
	if duplicateOf == nil {
		b = append(b, "null"...)
	} else {
		b = strconv.AppendInt(b, *duplicateOf, 10)
	}
	return append(b, '}')
}
