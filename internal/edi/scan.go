package edi

import (
	"bytes"
	"crypto/sha256"
	"hash"
	"strings"
	"unicode/utf8"
)

// syntax is the delimiters of an interchange.
type syntax struct {
	element, component, terminator byte
	release                        byte // 0 when there is none
	latin1                         bool // text is ISO-8859-1, not UTF-8
	charset                        string
}

// scanner cuts an interchange into segments and hashes them as it goes.
type scanner struct {
	body []byte
	pos  int
	syntax
	// classes is what each byte is under the syntax, for the loops that
	// read every byte of a segment (elementEnd, viewBuilder.appendElement):
	// one look-up a byte instead of a comparison with each delimiter.
	classes [256]byteClass
	n       int // segments read
	// hash is the interchange's content hash, nil for a scanner that only
	// rebuilds a stored message's view (ViewOf).
	hash *segmentHash
}

// segmentHash is the SHA-256 of an interchange's segments, which it is
// given one at a time and passes on to SHA-256 a few KiB at a time: fed a
// segment of some thirty bytes at a time, SHA-256 cost about three times
// as much a byte as fed whole blocks (make profile's x12-100 mix), as
// each call starts and ends the CPU's SHA instructions anew.
type segmentHash struct {
	sha     hash.Hash
	pending []byte // written, not yet passed on
}

// segmentHashBuffer is how much segmentHash holds before passing it on.
const segmentHashBuffer = 4 << 10

func newSegmentHash() *segmentHash {
	return &segmentHash{sha: sha256.New(), pending: make([]byte, 0, segmentHashBuffer)}
}

// write hashes b after what was written before; a nil h hashes nothing.
func (h *segmentHash) write(b []byte) {
	if h == nil {
		return
	}
	if len(h.pending)+len(b) > cap(h.pending) {
		h.sha.Write(h.pending)
		h.pending = h.pending[:0]
		if len(b) >= cap(h.pending) {
			h.sha.Write(b)
			return
		}
	}
	h.pending = append(h.pending, b...)
}

// sum appends the hash of everything written to b.
func (h *segmentHash) sum(b []byte) []byte {
	h.sha.Write(h.pending)
	h.pending = h.pending[:0]
	return h.sha.Sum(b)
}

// byteClass is what a byte is to a scanner: text, or a delimiter.
type byteClass uint8

const (
	plain     byteClass = iota // text written as it is in a JSON string
	escaped                    // text a JSON string escapes, or ISO-8859-1 to decode
	released                   // the release character
	separator                  // the element separator
	component                  // the component separator
	nul                        // a NUL byte, which no segment may hold
)

// newScanner reads body with the syntax s, hashing its segments when
// hashed (Interchange.ContentHash).
func newScanner(body []byte, s syntax, hashed bool) *scanner {
	sc := &scanner{body: body}
	if hashed {
		sc.hash = newSegmentHash()
	}
	sc.use(s)
	return sc
}

// use reads what follows with the syntax s: its delimiters and character set.
func (sc *scanner) use(s syntax) {
	sc.syntax = s
	for c := range sc.classes {
		switch {
		case c < 0x20 || c == '"' || c == '\\' || (c >= utf8.RuneSelf && s.latin1):
			sc.classes[c] = escaped
		default:
			sc.classes[c] = plain
		}
	}
	// Later ones win where two are the same byte, as the first case of
	// elementEnd's reading did.
	sc.classes[0] = nul
	sc.classes[s.component] = component
	sc.classes[s.element] = separator
	if s.release != 0 {
		sc.classes[s.release] = released
	}
}

// skipBreaks steps over line breaks between segments, which belong to no
// segment and to no hash.
func (sc *scanner) skipBreaks() {
	for sc.pos < len(sc.body) && (sc.body[sc.pos] == '\r' || sc.body[sc.pos] == '\n') {
		sc.pos++
	}
}

// done tells whether nothing but white space is left.
func (sc *scanner) done() bool {
	for _, c := range sc.body[sc.pos:] {
		if c != '\r' && c != '\n' && c != ' ' && c != '\t' {
			return false
		}
	}
	return true
}

// next reads the next segment: its raw bytes without the terminator, and
// where it starts and ends (after the terminator) in the body. ok is false
// at the end of the body; a segment without a terminator is malformed.
func (sc *scanner) next() (raw []byte, start, end int, err error) {
	sc.skipBreaks()
	if sc.pos >= len(sc.body) {
		return nil, 0, 0, nil
	}
	start = sc.pos
	if i := sc.terminatorFrom(start); i >= 0 {
		sc.n++
		sc.pos = i + 1
		sc.hash.write(sc.body[start:sc.pos])
		return sc.body[start:i], start, sc.pos, nil
	}
	sc.n++
	id := segmentID(sc.body[start:], sc.element)
	return nil, 0, 0, &MalformedError{Segment: id, Position: sc.n,
		Reason: "the segment has no terminator " + quoteByte(sc.terminator) + ": the interchange is cut short"}
}

// terminatorFrom returns the offset in the body of the first segment
// terminator at start or after it that is not released, or -1. A
// terminator is released when an odd number of release characters stands
// right before it (each pair is a released release character).
func (sc *scanner) terminatorFrom(start int) int {
	for from := start; ; {
		i := bytes.IndexByte(sc.body[from:], sc.terminator)
		if i < 0 {
			return -1
		}
		i += from
		if sc.release == 0 {
			return i
		}
		k := i
		for k > start && sc.body[k-1] == sc.release {
			k--
		}
		if (i-k)%2 == 0 {
			return i
		}
		from = i + 1
	}
}

// id returns the start of raw up to the first element separator, at most
// four bytes: the segment's id when it has one (see head).
func (sc *scanner) id(raw []byte) []byte {
	n := 0
	for n < len(raw) && n < 4 && raw[n] != sc.element {
		n++
	}
	return raw[:n]
}

// segmentID is the start of raw up to the first separator, when it looks
// like a segment id, else "".
func segmentID(raw []byte, element byte) string {
	end := 0
	for end < len(raw) && end < 4 && raw[end] != element {
		end++
	}
	if validID(raw[:end]) {
		return string(raw[:end])
	}
	return ""
}

// validID tells whether id is two or three capital letters or digits,
// starting with a letter, as every X12 and EDIFACT segment id is.
func validID(id []byte) bool {
	if len(id) < 2 || len(id) > 3 || id[0] < 'A' || id[0] > 'Z' {
		return false
	}
	for _, c := range id {
		if (c < 'A' || c > 'Z') && (c < '0' || c > '9') {
			return false
		}
	}
	return true
}

// head checks what every segment must be, the scanner's last one raw:
// that it starts with a segment id, followed by the element separator or
// nothing, and that its text is valid in the interchange's character set.
// It returns the id's length.
func (sc *scanner) head(raw []byte) (int, error) {
	n := len(sc.id(raw))
	if !validID(raw[:n]) || (len(raw) > n && raw[n] != sc.element) {
		return 0, &MalformedError{Position: sc.n, Reason: "the segment does not start with a segment id (two or three capital letters or digits)"}
	}
	if !sc.latin1 && (!utf8.Valid(raw) || bytes.IndexByte(raw, 0) >= 0) {
		return 0, checkUTF8(&segment{id: string(raw[:n]), position: sc.n}, raw, sc.charset)
	}
	return n, nil
}

// split reads raw into a segment: elements by the element separator, and,
// when components is true, components by the component separator, with
// the release character honoured, and text decoded to UTF-8.
func (sc *scanner) split(raw []byte, components bool) (*segment, error) {
	n, err := sc.head(raw)
	if err != nil {
		return nil, err
	}
	s := &segment{id: string(raw[:n]), position: sc.n, raw: raw}
	var text strings.Builder
	current := []string{}
	flush := func() {
		current = append(current, text.String())
		text.Reset()
	}
	for i := 0; i < len(raw); i++ {
		c := raw[i]
		switch {
		case sc.release != 0 && c == sc.release:
			if i+1 >= len(raw) {
				return nil, s.malformed(0, "the segment ends with the release character %s", quoteByte(sc.release))
			}
			i++
			sc.writeChar(&text, raw[i])
		case c == sc.element:
			flush()
			s.elements = append(s.elements, current)
			current = []string{}
		case components && c == sc.component:
			flush()
		case c == 0:
			return nil, s.malformed(0, "the segment holds a NUL byte")
		default:
			sc.writeChar(&text, c)
		}
	}
	flush()
	s.elements = append(s.elements, current)
	return s, nil
}

// writeChar writes one byte of text, read as ISO-8859-1 when the
// interchange says so.
func (sc *scanner) writeChar(b *strings.Builder, c byte) {
	if sc.latin1 && c >= 0x80 {
		b.WriteRune(rune(c))
		return
	}
	b.WriteByte(c)
}

func quoteByte(c byte) string {
	if c < 0x20 || c >= 0x7f {
		return "0x" + string("0123456789abcdef"[c>>4]) + string("0123456789abcdef"[c&0xf])
	}
	return "'" + string(rune(c)) + "'"
}
