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
	last    int            // the member of the last segment, if below n
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
	// A segment most often repeats the one before it (an order's lines),
	// which is then found without hashing its id.
	if v.last < v.n && v.members[v.last].id == string(id) {
		return &v.members[v.last]
	}
	if k, ok := v.index[string(id)]; ok {
		v.last = k
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
	v.last = v.n
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
	e, fault := sc.elementEnd(raw)
	for i, rest := 1, raw[e.end:]; fault == "" && len(rest) > 0; i++ {
		var data bool
		// rest starts with the element separator before element i.
		b, rest, data, fault = v.appendElement(b, sc, id, i, rest[1:])
		if data {
			kept = len(b)
		}
	}
	if fault != "" {
		return nil, (&segment{id: string(id), position: sc.n}).malformed(0, "%s", fault)
	}
	return append(b[:kept], '}'), nil
}

// appendElement writes the element at the start of rest as member i of
// the segment id: a string, or an array of its components when it has
// several. It reads the element's bytes once, writing them as it goes
// (reading them first for where the element ends, and again for its
// components, cost an interchange a fifth of its reading). It returns
// rest after the element, from the element separator that ends it on;
// whether the element holds anything but empty components; or what is
// wrong with the segment: a NUL byte, or a release character at its end,
// which split refuses alike.
func (v *viewBuilder) appendElement(b []byte, sc *scanner, id []byte, i int, rest []byte) (_ []byte, after []byte, data bool, fault string) {
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
	open := len(b) // where the array opens should a component separator come
	b = append(b, '"')
	components := false
	j := 0
	for {
		// Most text is written as it is: a run of such bytes is appended
		// at once.
		run := j
		for j < len(rest) && sc.classes[rest[j]] == plain {
			j++
		}
		if j > run {
			data = true
			b = append(b, rest[run:j]...)
		}
		if j == len(rest) {
			break
		}
		c := rest[j]
		switch sc.classes[c] {
		case separator:
			return v.closeElement(b, components), rest[j:], data, ""
		case component:
			if !components {
				components = true
				b = append(b, 0)
				copy(b[open+1:], b[open:])
				b[open] = '['
			}
			b = append(b, '"', ',', '"')
			j++
			continue
		case nul:
			return nil, nil, false, "the segment holds a NUL byte"
		case released:
			if j+1 >= len(rest) {
				return nil, nil, false, "the segment ends with the release character " + quoteByte(sc.release)
			}
			j++
			c = rest[j]
		}
		data = true
		b = v.appendChar(b, sc, c)
		j++
	}
	return v.closeElement(b, components), nil, data, ""
}

// closeElement ends the string of an element's text, and its array when
// it has components.
func (v *viewBuilder) closeElement(b []byte, components bool) []byte {
	if components {
		return append(b, '"', ']')
	}
	return append(b, '"')
}

// appendChar writes c, a byte of text that is not written as it is, or one
// the release character released: ISO-8859-1 decoded when the interchange
// is in it, else escaped as a JSON string needs.
func (v *viewBuilder) appendChar(b []byte, sc *scanner, c byte) []byte {
	if c >= utf8.RuneSelf && sc.latin1 {
		return utf8.AppendRune(b, rune(c))
	}
	if !canonicalChar(c) {
		v.canonical = false
	}
	return appendChar(b, c)
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
