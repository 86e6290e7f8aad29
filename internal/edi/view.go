package edi

import (
	"slices"
	"strconv"
	"unicode/utf8"

	"github.com/lefia/edihub/internal/canon"
	"github.com/lefia/edihub/internal/viewmem"
)

// viewBuilder writes the JSON view of one message as its segments arrive,
// and beside it the view's RFC 8785 canonical form, from which ingest
// takes the message's hashes instead of canonicalising the view. Each
// segment is written straight from its bytes as received (a segment split
// into a string per element cost an interchange more than half of its
// reading, and of its memory: docs/performance.md, "A 10 MiB
// interchange"). Each segment id's occurrences are written to a buffer of
// their own, so a message costs about its view, whatever the number of its
// segments; the buffers are reused from one message to the next.
type viewBuilder struct {
	members []segmentMember // [:n] are the message's, in order of first appearance
	n       int
	index   map[string]int // of members[:n], by id
	// canonical is false once the message holds what its view writes
	// otherwise than the canonical form does: a value with a character
	// appendString escapes otherwise (canonicalString), or a segment of
	// more than 99 elements, whose names (BEG100) do not sort as their
	// positions do. The message then has no canonical form of the builder's.
	canonical bool
	order     []int // members[:n] in canonical order
	// canonicalBytes is the size of the canonical forms written so far,
	// at most maxCanonicalBytes.
	canonicalBytes int
}

// maxCanonicalBytes bounds the canonical forms written for one
// interchange. Each is kept with its view until the request's messages are
// stored, where canon's canonicalisation in ingest holds one at a time: a
// 10 MiB interchange's would raise its peak heap by about a seventh
// (docs/performance.md, "A 10 MiB interchange"), and an interchange of a
// hundred messages of a few KiB needs a few hundred KiB.
const maxCanonicalBytes = 1 << 20

// segmentMember is the member of one segment id: its occurrences written
// so far, separated by commas.
type segmentMember struct {
	id          string
	occurrences []byte
}

// reset starts a message.
func (v *viewBuilder) reset() {
	v.n = 0
	clear(v.index)
	v.canonical = true
}

// add writes the occurrence of raw, the scanner's last segment without its
// terminator, to its id's member. It refuses what split refuses, alike.
func (v *viewBuilder) add(sc *scanner, raw []byte) error {
	n, err := sc.head(raw)
	if err != nil {
		return err
	}
	m := v.member(raw[:n])
	if len(m.occurrences) > 0 {
		m.occurrences = append(m.occurrences, ',')
	}
	m.occurrences, err = v.appendOccurrence(m.occurrences, sc, raw, n)
	return err
}

// member returns the member of the segment id, new when the message has
// none yet.
func (v *viewBuilder) member(id []byte) *segmentMember {
	if k, ok := v.index[string(id)]; ok {
		return &v.members[k]
	}
	if v.n == len(v.members) {
		v.members = append(v.members, segmentMember{})
	}
	m := &v.members[v.n]
	if m.id != string(id) {
		m.id = string(id)
	}
	m.occurrences = m.occurrences[:0]
	if v.index == nil {
		v.index = make(map[string]int)
	}
	v.index[m.id] = v.n
	v.n++
	return m
}

// appendOccurrence writes the occurrence of raw, a segment whose id is
// raw[:n], as an object of its elements named by id and position, leaving
// out its empty trailing elements: an element of one component is a
// string, one of several an array of them.
func (v *viewBuilder) appendOccurrence(b []byte, sc *scanner, raw []byte, n int) ([]byte, error) {
	id := raw[:n]
	b = append(b, '{')
	kept := len(b) // up to the last element that is not empty
	// Element 0 is the id, which ends where split ends it: at the first
	// element separator not released, should the release character be a
	// letter or digit of the id.
	for i, rest := 0, raw; ; i++ {
		e, fault := sc.elementEnd(rest)
		if fault != "" {
			return nil, (&segment{id: string(id), position: sc.n}).malformed(0, "%s", fault)
		}
		if i > 0 {
			b = v.appendElement(b, sc, id, i, rest[:e.end], e.components)
			if e.data {
				kept = len(b)
			}
		}
		if e.end == len(rest) {
			return append(b[:kept], '}'), nil
		}
		rest = rest[e.end+1:] // after the element separator
	}
}

// appendElement writes element i of the segment id as a member: a
// string, or an array of its components when it has several.
func (v *viewBuilder) appendElement(b []byte, sc *scanner, id []byte, i int, element []byte, components bool) []byte {
	if i > 1 {
		b = append(b, ',')
	}
	if i > 99 {
		v.canonical = false
	}
	b = append(b, '"')
	b = append(b, id...)
	if i < 100 {
		b = append(b, twoDigits[2*i], twoDigits[2*i+1])
	} else {
		b = strconv.AppendInt(b, int64(i), 10)
	}
	b = append(b, '"', ':')
	if !components {
		return v.appendText(b, sc, element)
	}
	b = append(b, '[')
	for {
		k := sc.componentEnd(element)
		b = v.appendText(b, sc, element[:k])
		if k == len(element) {
			return append(b, ']')
		}
		b = append(b, ',')
		element = element[k+1:]
	}
}

// appendText writes text, a component as received, as a JSON string: the
// release character dropped before the character it releases, and
// ISO-8859-1 decoded when the interchange is in it.
func (v *viewBuilder) appendText(b []byte, sc *scanner, text []byte) []byte {
	b = append(b, '"')
	for i := 0; i < len(text); i++ {
		// Most text is written as it is: a run of such bytes is appended
		// at once.
		run := i
		for i < len(text) && sc.classes[text[i]] == plain {
			i++
		}
		b = append(b, text[run:i]...)
		if i == len(text) {
			break
		}
		c := text[i]
		if sc.release != 0 && c == sc.release {
			i++ // elementEnd found the character it releases
			c = text[i]
		}
		switch {
		case c >= utf8.RuneSelf && sc.latin1:
			b = utf8.AppendRune(b, rune(c))
		default:
			if !canonicalChar(c) {
				v.canonical = false
			}
			b = appendChar(b, c)
		}
	}
	return append(b, '"')
}

// twoDigits are the numbers 00 to 99, two digits each.
const twoDigits = "00010203040506070809101112131415161718192021222324252627282930313233343536373839" +
	"40414243444546474849505152535455565758596061626364656667686970717273747576777879" +
	"8081828384858687888990919293949596979899"

// element is where an element ends (up to the next element separator
// that is not released), whether it holds a component separator that is
// not, and whether it holds anything else: an element of empty components
// only is empty.
type element struct {
	end              int
	components, data bool
}

// elementEnd reads the element at the start of rest; or says what is
// wrong with the segment: a NUL byte, or a release character at its end,
// which split refuses alike.
func (sc *scanner) elementEnd(rest []byte) (e element, fault string) {
	for i := 0; i < len(rest); i++ {
		switch sc.classes[rest[i]] {
		case plain, escaped:
			e.data = true
		case released:
			if i+1 >= len(rest) {
				return e, "the segment ends with the release character " + quoteByte(sc.release)
			}
			i++
			e.data = true
		case separator:
			e.end = i
			return e, ""
		case component:
			e.components = true
		case nul:
			return e, "the segment holds a NUL byte"
		}
	}
	e.end = len(rest)
	return e, ""
}

// componentEnd returns the length of the component at the start of
// element, one that elementEnd has checked.
func (sc *scanner) componentEnd(element []byte) int {
	for i := 0; i < len(element); i++ {
		switch sc.classes[element[i]] {
		case released:
			i++
		case component:
			return i
		}
	}
	return len(element)
}

// json returns the message's view: the segments in order of first
// appearance, then the member "interchange", envelope; and its canonical
// form, with envelopeCanonical, nil when the builder has none (see
// viewBuilder.canonical) or has written maxCanonicalBytes of them. Both
// are written to one piece of mem.
func (v *viewBuilder) json(mem *viewmem.Memory, envelope, envelopeCanonical []byte) (view, canonical []byte) {
	const interchange = `"interchange":`
	size := 1 + len(interchange) + len(envelope) + 1
	for _, m := range v.members[:v.n] {
		size += len(m.id) + len(`"":[],`) + len(m.occurrences)
	}
	if !v.canonical || envelopeCanonical == nil || v.canonicalBytes+size > maxCanonicalBytes {
		return v.write(mem.Take(size), false, envelope), nil
	}
	v.canonicalBytes += size
	view = v.write(mem.Take(2*size), false, envelope)
	// Segment ids are capital letters and digits, which sort before
	// "interchange"; the members of each occurrence are in canonical order
	// as written.
	v.order = v.order[:0]
	for k := range v.n {
		v.order = append(v.order, k)
	}
	slices.SortFunc(v.order, func(a, b int) int { return canon.CompareNames(v.members[a].id, v.members[b].id) })
	canonical = v.write(view[len(view):], true, envelopeCanonical)
	return view[:len(view):len(view)], canonical
}

// write appends the view's object to b, its segments' members in order of
// first appearance, or in v.order when sorted.
func (v *viewBuilder) write(b []byte, sorted bool, envelope []byte) []byte {
	b = append(b, '{')
	for k := range v.n {
		if sorted {
			k = v.order[k]
		}
		m := &v.members[k]
		b = append(b, '"')
		b = append(b, m.id...)
		b = append(b, `":[`...)
		b = append(b, m.occurrences...)
		b = append(b, ']', ',')
	}
	b = append(b, `"interchange":`...)
	b = append(b, envelope...)
	return append(b, '}')
}

// messageEnvelope is the member "interchange" of the views of messages,
// its canonical form (envelopeCanonical) and the messages' frame (see
// ViewOf), made once for the messages of one group and version.
type messageEnvelope struct {
	group                  int
	version                string
	view, canonical, frame []byte
}

// of returns the envelope of a message of the group at index group, read
// by sc, made anew when the last one made was another's.
func (e *messageEnvelope) of(sc *scanner, group int, standard, sender, receiver, control, groupControl, version string) *messageEnvelope {
	if e.view == nil || e.group != group || e.version != version {
		e.group, e.version = group, version
		e.view = envelopeJSON(standard, sender, receiver, control, groupControl, version)
		e.canonical = envelopeCanonical(standard, sender, receiver, control, groupControl, version)
		e.frame = frameOf(sc, e.view)
	}
	return e
}
