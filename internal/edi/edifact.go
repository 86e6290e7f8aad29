package edi

import "fmt"

// latin1Charset names ISO-8859-1, which UNOA to UNOC are read as.
const latin1Charset = "ISO-8859-1"

// charsets are the syntax identifiers (UNB 0001) read, and how: UNOA to
// UNOC as ISO-8859-1 (UNOA and UNOB are subsets of it), UNOW as UTF-8.
var charsets = map[string]syntax{
	"UNOA": {latin1: true, charset: latin1Charset},
	"UNOB": {latin1: true, charset: latin1Charset},
	"UNOC": {latin1: true, charset: latin1Charset},
	"UNOW": {charset: "UTF-8"},
}

// parseEDIFACT reads an EDIFACT interchange: UNA (optional), UNB, messages
// (UNH…UNT) alone or in groups (UNG…UNE), UNZ.
func parseEDIFACT(b []byte, limits Limits) (*Interchange, error) {
	delimiters := syntax{component: ':', element: '+', release: '?', terminator: '\''}
	if len(b) >= 3 && string(b[:3]) == "UNA" {
		una := &segment{id: "UNA", position: 1}
		if len(b) < 9 {
			return nil, una.malformed(0, "the UNA segment is %d characters long, not 9", len(b))
		}
		delimiters = syntax{component: b[3], element: b[4], release: b[6], terminator: b[8]}
		if delimiters.release == ' ' {
			delimiters.release = 0
		}
		if err := checkSeparators(una, delimiters.element, delimiters.component, delimiters.terminator); err != nil {
			return nil, err
		}
		if r := delimiters.release; r != 0 && (r == delimiters.element || r == delimiters.component || r == delimiters.terminator) {
			return nil, una.malformed(0, "the release character %s is also a separator", quoteByte(r))
		}
	}
	delimiters.latin1, delimiters.charset = true, latin1Charset // until UNB names the character set
	sc := newScanner(b, delimiters, true)
	if string(b[:3]) == "UNA" {
		sc.pos = 9
		sc.n = 1
		sc.hash.write(b[:9])
	}
	e := &edifactReader{sc: sc, limits: limits}
	raw, _, _, err := sc.next()
	if err != nil {
		return nil, err
	}
	if raw == nil {
		return nil, &MalformedError{Position: sc.n + 1, Reason: "the interchange ends before its UNB segment"}
	}
	unb, err := sc.split(raw, true)
	if err != nil {
		return nil, err
	}
	if unb.id != "UNB" {
		return nil, unb.malformed(0, "the interchange starts with %s, not UNB", unb.id)
	}
	syntaxID := unb.component(1, 0)
	cs, known := charsets[syntaxID]
	if !known {
		return nil, unb.malformed(1, "the syntax identifier %q is not one of UNOA, UNOB, UNOC or UNOW", syntaxID)
	}
	delimiters.latin1, delimiters.charset = cs.latin1, cs.charset
	sc.use(delimiters)
	if !cs.latin1 {
		// UNB was read as ISO-8859-1 to find its syntax identifier; in
		// UTF-8 its text is read again.
		if unb, err = sc.split(raw, true); err != nil {
			return nil, err
		}
	}
	e.ic = &Interchange{
		Standard:      EDIFACT,
		Sender:        qualified(unb.component(2, 1), unb.component(2, 0)),
		Receiver:      qualified(unb.component(3, 1), unb.component(3, 0)),
		ControlNumber: unb.element(5),
		Version:       unb.element(1),
		AckRequested:  unb.element(9) == "1",
		Test:          unb.element(11) == "1",
		env: envelopeFields{
			senderQualifier: unb.component(2, 1), senderID: unb.component(2, 0),
			receiverQualifier: unb.component(3, 1), receiverID: unb.component(3, 0),
			date: unb.component(4, 0), time: unb.component(4, 1), syntax: unb.element(1),
		},
	}
	if e.ic.ControlNumber == "" {
		return nil, unb.malformed(5, "the interchange control reference is empty")
	}
	if unb.component(2, 0) == "" || unb.component(3, 0) == "" {
		return nil, unb.malformed(2, "the sender or recipient identification is empty")
	}
	return e.read()
}

type edifactReader struct {
	sc     *scanner
	ic     *Interchange
	limits Limits
	view   viewBuilder
	// The envelope member of the views of a group's messages.
	envelope messageEnvelope
}

// next reads the next segment's bytes, or fails naming what was expected
// when the interchange ends.
func (e *edifactReader) next(expected string) ([]byte, int, int, error) {
	raw, start, end, err := e.sc.next()
	if err == nil && raw == nil {
		err = &MalformedError{Position: e.sc.n + 1,
			Reason: fmt.Sprintf("the interchange ends after segment %d, where %s was expected", e.sc.n, expected)}
	}
	return raw, start, end, err
}

// segment reads and splits the next segment.
func (e *edifactReader) segment(expected string) (*segment, int, int, error) {
	raw, start, end, err := e.next(expected)
	if err != nil {
		return nil, 0, 0, err
	}
	s, err := e.sc.split(raw, true)
	return s, start, end, err
}

// edifactEnvelope tells the segments that open and close messages, groups
// and the interchange: the others of a message go to its view without
// being split.
func edifactEnvelope(id []byte) bool {
	switch string(id) {
	case "UNH", "UNT", "UNG", "UNE", "UNB", "UNZ":
		return true
	}
	return false
}

func (e *edifactReader) read() (*Interchange, error) {
	grouped, ungrouped := false, false
	for {
		s, start, _, err := e.segment("UNH, UNG or UNZ")
		if err != nil {
			return nil, err
		}
		switch {
		case s.id == "UNG" && !ungrouped:
			grouped = true
			if err := e.group(s); err != nil {
				return nil, err
			}
			continue
		case s.id == "UNH" && !grouped:
			if !ungrouped {
				ungrouped = true
				e.ic.Groups = append(e.ic.Groups, Group{})
			}
			if err := e.message(s, start, 0); err != nil {
				return nil, err
			}
			e.ic.Groups[0].Messages++
			continue
		case s.id == "UNZ":
		case s.id == "UNG" || s.id == "UNH":
			return nil, s.malformed(0, "a %s segment stands beside messages outside a group: an interchange holds groups or messages, not both", s.id)
		default:
			return nil, s.malformed(0, "a %s segment stands where UNH, UNG or UNZ was expected", s.id)
		}
		count, what := len(e.ic.Messages), "messages of the interchange"
		if grouped {
			count, what = len(e.ic.Groups), "groups of the interchange"
		}
		if err := countIs(s, 1, count, what); err != nil {
			return nil, err
		}
		if err := controlIs(s, 2, e.ic.ControlNumber, "UNB 0020"); err != nil {
			return nil, err
		}
		if !e.sc.done() {
			return nil, &MalformedError{Position: e.sc.n + 1, Reason: "data follows the UNZ trailer"}
		}
		if len(e.ic.Messages) == 0 {
			return nil, s.malformed(0, "the interchange holds no message")
		}
		e.sc.hash.sum(e.ic.ContentHash[:0])
		return e.ic, nil
	}
}

// group reads a group after its UNG segment.
func (e *edifactReader) group(ung *segment) error {
	g := Group{ID: ung.element(1), ControlNumber: ung.element(5), Version: joinComponents(ung, 7, 0, 1)}
	if g.ControlNumber == "" {
		return ung.malformed(5, "the group reference number is empty")
	}
	index := len(e.ic.Groups)
	e.ic.Groups = append(e.ic.Groups, g)
	for {
		s, start, _, err := e.segment("UNH or UNE")
		if err != nil {
			return err
		}
		switch s.id {
		case "UNH":
			if err := e.message(s, start, index); err != nil {
				return err
			}
			e.ic.Groups[index].Messages++
			continue
		case "UNE":
		default:
			return s.malformed(0, "a %s segment stands where UNH or UNE was expected", s.id)
		}
		if err := countIs(s, 1, e.ic.Groups[index].Messages, "messages of the group"); err != nil {
			return err
		}
		return controlIs(s, 2, g.ControlNumber, "UNG 0048")
	}
}

// joinComponents joins components js of element i with ':', leaving out
// empty ones at the end.
func joinComponents(s *segment, i int, js ...int) string {
	out := ""
	for n, j := range js {
		c := s.component(i, j)
		if c == "" {
			break
		}
		if n > 0 {
			out += ":"
		}
		out += c
	}
	return out
}

// message reads a message after its UNH segment, which starts at start.
func (e *edifactReader) message(unh *segment, start, group int) error {
	if len(e.ic.Messages) >= e.limits.MaxMessages {
		return &TooManyMessagesError{Max: e.limits.MaxMessages}
	}
	docnum, code := unh.element(1), unh.component(2, 0)
	if docnum == "" {
		return unh.malformed(1, "the message reference number is empty")
	}
	if code == "" {
		return unh.malformed(2, "the message type is empty")
	}
	version := joinComponents(unh, 2, 1, 2)
	v := &e.view
	v.reset()
	if err := v.add(e.sc, unh.raw); err != nil {
		return err
	}
	segments := 1
	for {
		raw, _, end, err := e.next("UNT")
		if err != nil {
			return err
		}
		if !edifactEnvelope(e.sc.id(raw)) {
			if err := v.add(e.sc, raw); err != nil {
				return err
			}
			segments++
			continue
		}
		s, err := e.sc.split(raw, true)
		if err != nil {
			return err
		}
		if s.id != "UNT" {
			return s.malformed(0, "a %s segment stands inside message %s, which has no UNT trailer", s.id, docnum)
		}
		segments++
		if err := countIs(s, 1, segments, "segments of the message, UNH and UNT included"); err != nil {
			return err
		}
		if err := controlIs(s, 2, docnum, "UNH 0062"); err != nil {
			return err
		}
		if err := v.add(e.sc, raw); err != nil {
			return err
		}
		g := e.ic.Groups[group]
		env := e.envelope.of(e.sc, group, EDIFACT, e.ic.Sender, e.ic.Receiver, e.ic.ControlNumber, g.ControlNumber, version)
		m := Message{Position: len(e.ic.Messages) + 1, Group: group, Code: code, Docnum: docnum, Version: version,
			Bytes: e.sc.body[start:end], Frame: env.frame}
		m.View, m.Canonical = v.json(&e.ic.views, env.view, env.canonical)
		e.ic.Messages = append(e.ic.Messages, m)
		return nil
	}
}
