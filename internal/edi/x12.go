package edi

import (
	"fmt"
	"strings"
)

// isaLength is the length of an ISA segment with its terminator: its
// elements have fixed widths, so the separators stand at fixed places.
const isaLength = 106

// isaWidths are the widths of ISA01 to ISA16.
var isaWidths = [16]int{2, 10, 2, 10, 2, 15, 2, 15, 6, 4, 1, 5, 9, 1, 1, 1}

// parseX12 reads an X12 interchange: ISA, functional groups (GS…GE) of
// transaction sets (ST…SE), IEA.
func parseX12(b []byte, limits Limits) (*Interchange, error) {
	isa := &segment{id: "ISA", position: 1}
	if len(b) < isaLength {
		return nil, isa.malformed(0, "the ISA segment is %d characters long, not %d", len(b), isaLength)
	}
	element := b[3]
	at := 3
	for i, w := range isaWidths {
		if b[at] != element {
			return nil, isa.malformed(i+1, "the element separator %s is not at character %d, where ISA%02d's fixed width puts it",
				quoteByte(element), at+1, i+1)
		}
		at += 1 + w
	}
	component, terminator := b[104], b[105]
	if err := checkSeparators(isa, element, component, terminator); err != nil {
		return nil, err
	}
	sc := newScanner(b, syntax{element: element, component: component, terminator: terminator, charset: "UTF-8"}, true)
	raw, _, _, err := sc.next()
	if err != nil {
		return nil, err
	}
	if isa, err = sc.split(raw, false); err != nil {
		return nil, err
	}
	ic := &Interchange{
		Standard:      X12,
		Sender:        qualified(isa.element(5), isa.element(6)),
		Receiver:      qualified(isa.element(7), isa.element(8)),
		ControlNumber: isa.element(13),
		Version:       isa.element(12),
		AckRequested:  isa.element(14) == "1",
		Test:          isa.element(15) == "T",
		env: envelopeFields{
			senderQualifier: isa.element(5), senderID: strings.TrimSpace(isa.element(6)),
			receiverQualifier: isa.element(7), receiverID: strings.TrimSpace(isa.element(8)),
			date: isa.element(9), time: isa.element(10),
			element: element, component: component, terminator: terminator,
		},
	}
	if !digits(ic.ControlNumber) {
		return nil, isa.malformed(13, "the interchange control number %q is not nine digits", ic.ControlNumber)
	}
	if v := isa.element(14); v != "0" && v != "1" {
		return nil, isa.malformed(14, "the acknowledgment request %q is neither 0 nor 1", v)
	}
	if v := isa.element(15); v != "P" && v != "T" && v != "I" {
		return nil, isa.malformed(15, "the usage indicator %q is neither P, T nor I", v)
	}
	x := &x12Reader{sc: sc, ic: ic, limits: limits}
	return x.read()
}

// checkSeparators refuses separators that cannot be told apart from each
// other or from data.
func checkSeparators(s *segment, element, component, terminator byte) error {
	for _, c := range []byte{element, component, terminator} {
		if c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == ' ' || c == 0 || c >= 0x80 {
			return s.malformed(0, "the separator %s is a letter, a digit, a space or not ASCII", quoteByte(c))
		}
	}
	if element == component || element == terminator || component == terminator {
		return s.malformed(0, "the element separator %s, component separator %s and segment terminator %s are not three different characters",
			quoteByte(element), quoteByte(component), quoteByte(terminator))
	}
	return nil
}

// qualified is QUALIFIER:ID, without X12's padding; the ID alone when there
// is no qualifier.
func qualified(qualifier, id string) string {
	qualifier, id = strings.TrimSpace(qualifier), strings.TrimSpace(id)
	if qualifier == "" {
		return id
	}
	return qualifier + ":" + id
}

func digits(s string) bool {
	if s == "" {
		return false
	}
	for _, c := range []byte(s) {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

type x12Reader struct {
	sc     *scanner
	ic     *Interchange
	limits Limits
	view   viewBuilder
	// The envelope member of the views of a group's messages.
	envelope messageEnvelope
}

// next reads the next segment's bytes, or fails naming what was expected
// when the interchange ends.
func (x *x12Reader) next(expected string) ([]byte, int, int, error) {
	raw, start, end, err := x.sc.next()
	if err == nil && raw == nil {
		err = &MalformedError{Position: x.sc.n + 1,
			Reason: fmt.Sprintf("the interchange ends after segment %d, where %s was expected", x.sc.n, expected)}
	}
	return raw, start, end, err
}

// segment reads and splits the next segment.
func (x *x12Reader) segment(expected string) (*segment, int, int, error) {
	raw, start, end, err := x.next(expected)
	if err != nil {
		return nil, 0, 0, err
	}
	s, err := x.sc.split(raw, true)
	return s, start, end, err
}

// x12Envelope tells the segments that open and close transaction sets,
// groups and the interchange: the others of a transaction set go to its
// view without being split.
func x12Envelope(id []byte) bool {
	switch string(id) {
	case "ST", "SE", "GS", "GE", "ISA", "IEA":
		return true
	}
	return false
}

func (x *x12Reader) read() (*Interchange, error) {
	for {
		s, _, _, err := x.segment("GS or IEA")
		if err != nil {
			return nil, err
		}
		switch s.id {
		case "GS":
			if err := x.group(s); err != nil {
				return nil, err
			}
			continue
		case "TA1":
			// An interchange acknowledgment travels between ISA and the
			// groups; it belongs to no message.
			if len(x.ic.Groups) > 0 {
				return nil, s.malformed(0, "a TA1 segment stands after a functional group")
			}
			continue
		case "IEA":
		default:
			return nil, s.malformed(0, "a %s segment stands where GS or IEA was expected", s.id)
		}
		if err := countIs(s, 1, len(x.ic.Groups), "functional groups of the interchange"); err != nil {
			return nil, err
		}
		if err := controlIs(s, 2, x.ic.ControlNumber, "ISA13"); err != nil {
			return nil, err
		}
		if !x.sc.done() {
			return nil, &MalformedError{Position: x.sc.n + 1, Reason: "data follows the IEA trailer"}
		}
		if len(x.ic.Messages) == 0 {
			return nil, s.malformed(0, "the interchange holds no transaction set")
		}
		x.sc.hash.sum(x.ic.ContentHash[:0])
		return x.ic, nil
	}
}

// group reads a functional group after its GS segment.
func (x *x12Reader) group(gs *segment) error {
	g := Group{ID: gs.element(1), ControlNumber: gs.element(6), Version: gs.element(8),
		AppSender: gs.element(2), AppReceiver: gs.element(3)}
	if g.ControlNumber == "" {
		return gs.malformed(6, "the group control number is empty")
	}
	index := len(x.ic.Groups)
	x.ic.Groups = append(x.ic.Groups, g)
	for {
		s, start, _, err := x.segment("ST or GE")
		if err != nil {
			return err
		}
		switch s.id {
		case "ST":
			if err := x.transactionSet(s, start, index); err != nil {
				return err
			}
			x.ic.Groups[index].Messages++
			continue
		case "GE":
		default:
			return s.malformed(0, "a %s segment stands where ST or GE was expected", s.id)
		}
		if err := countIs(s, 1, x.ic.Groups[index].Messages, "transaction sets of the group"); err != nil {
			return err
		}
		return controlIs(s, 2, g.ControlNumber, "GS06")
	}
}

// transactionSet reads a transaction set after its ST segment, which
// starts at start in the body.
func (x *x12Reader) transactionSet(st *segment, start, group int) error {
	if len(x.ic.Messages) >= x.limits.MaxMessages {
		return &TooManyMessagesError{Max: x.limits.MaxMessages}
	}
	code, docnum := st.element(1), st.element(2)
	if code == "" {
		return st.malformed(1, "the transaction set identifier is empty")
	}
	if docnum == "" {
		return st.malformed(2, "the transaction set control number is empty")
	}
	v := &x.view
	v.reset()
	if err := v.add(x.sc, st.raw); err != nil {
		return err
	}
	segments := 1
	for {
		raw, _, end, err := x.next("SE")
		if err != nil {
			return err
		}
		if !x12Envelope(x.sc.id(raw)) {
			if err := v.add(x.sc, raw); err != nil {
				return err
			}
			segments++
			continue
		}
		s, err := x.sc.split(raw, true)
		if err != nil {
			return err
		}
		if s.id != "SE" {
			return s.malformed(0, "a %s segment stands inside transaction set %s, which has no SE trailer", s.id, docnum)
		}
		segments++
		if err := countIs(s, 1, segments, "segments of the transaction set, ST and SE included"); err != nil {
			return err
		}
		if err := controlIs(s, 2, docnum, "ST02"); err != nil {
			return err
		}
		if err := v.add(x.sc, raw); err != nil {
			return err
		}
		g := x.ic.Groups[group]
		env := x.envelope.of(x.sc, group, X12, x.ic.Sender, x.ic.Receiver, x.ic.ControlNumber, g.ControlNumber, g.Version)
		m := Message{Position: len(x.ic.Messages) + 1, Group: group, Code: code, Docnum: docnum, Version: g.Version,
			Bytes: x.sc.body[start:end], Frame: env.frame}
		m.View, m.Canonical = v.json(&x.ic.views, env.view, env.canonical)
		x.ic.Messages = append(x.ic.Messages, m)
		return nil
	}
}
