package canon

import (
	"bytes"
	"cmp"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/gowebpki/jcs"
)

// maxDepth is how deeply arrays and objects may nest, as in jcs and
// jsontext: deeper documents are refused rather than canonicalised.
const maxDepth = 10000

// writer reads one JSON document and writes its canonical form in a single
// pass: each value is written once, where it stands, and an object whose
// members were not received in canonical order has its members moved into
// that order when it closes. So a byte is read once and copied at most once
// per object around it whose members were out of order, where jsontext
// reads the written output again to reorder every object.
type writer struct {
	src   []byte
	pos   int
	depth int
	out   []byte
	// members are the members of the objects being written, the innermost
	// object's last.
	members []member
	// names holds the text of member names whose canonical form has an
	// escape, unescaped, for ordering and for finding duplicates.
	names []byte
	// moved holds an object's members while they are written back in order,
	// byName lists them in that order, by their place among the object's.
	moved  []byte
	byName []int32
	// lastAt is, for each of the outermost levels of nesting, the canonical
	// order of the last object at that level that arrived out of order.
	lastAt [orderedLevels]memberOrder
	// oneObjectArrays counts the arrays written whose only item is an
	// object: the brackets a shape form leaves out (ShapeHash).
	oneObjectArrays int
}

// orderedLevels is how many levels of nesting remember an order: an IDoc's
// segments nest a few levels deep.
const orderedLevels = 16

// memberOrder is the canonical order of an object's members, with their
// names in the order they arrived. An IDoc's repeated segments (its items,
// and in each item its schedules) arrive with the same names in the same
// order, each out of canonical order; the next object at the same level
// with the same names is put in order by comparing names rather than
// sorting them, and has no duplicate names since this one had none.
type memberOrder struct {
	names []byte  // the names' texts, one after the other
	ends  []int   // where each name's text ends in names
	order []int32 // the members' places in canonical order
}

// matches reports whether members have the names of o, in the same order.
func (o *memberOrder) matches(members []member) bool {
	if len(members) != len(o.ends) {
		return false
	}
	start := 0
	for i := range members {
		if !bytes.Equal(members[i].name, o.names[start:o.ends[i]]) {
			return false
		}
		start = o.ends[i]
	}
	return true
}

// remember makes o the order of members, which order puts in canonical
// order.
func (o *memberOrder) remember(members []member, order []int32) {
	o.names, o.ends = o.names[:0], o.ends[:0]
	for i := range members {
		o.names = append(o.names, members[i].name...)
		o.ends = append(o.ends, len(o.names))
	}
	o.order = append(o.order[:0], order...)
}

// member is one member of an object in out: its bytes from the opening
// quote of its name to the end of its value, and its name's text. The text
// is read from out, or from names when the canonical form of the name has
// an escape. A slice of out stays right though out grows, since the bytes
// of a name are never written again while its object is open.
type member struct {
	start, end int
	name       []byte
	// prefix is the name's first 8 bytes, big-endian, zero-padded: most
	// names differ in them, and two numbers compare faster than two slices.
	prefix uint64
	// wide is whether the name has a character from U+E000 up, the only
	// ones whose UTF-8 byte order is not their UTF-16 order.
	wide bool
}

// syntaxError reports where and why the document is not I-JSON.
type syntaxError struct {
	offset int
	why    string
}

func (e *syntaxError) Error() string {
	return fmt.Sprintf("invalid JSON at byte %d: %s", e.offset, e.why)
}

func (w *writer) fail(why string) error { return &syntaxError{offset: w.pos, why: why} }

// document writes the canonical form of the whole of w.src: one value with
// nothing but whitespace around it.
func (w *writer) document() error {
	w.skipSpace()
	if err := w.value(); err != nil {
		return err
	}
	w.skipSpace()
	if w.pos != len(w.src) {
		return w.fail("content after the value")
	}
	return nil
}

func (w *writer) skipSpace() {
	for w.pos < len(w.src) {
		switch w.src[w.pos] {
		case ' ', '\t', '\n', '\r':
			w.pos++
		default:
			return
		}
	}
}

func (w *writer) value() error {
	if w.pos == len(w.src) {
		return w.fail("unexpected end of input")
	}
	switch c := w.src[w.pos]; {
	case c == '{':
		return w.object()
	case c == '[':
		return w.array()
	case c == '"':
		_, err := w.string()
		return err
	case c == '-' || (c >= '0' && c <= '9'):
		return w.number()
	case c == 't':
		return w.literal("true")
	case c == 'f':
		return w.literal("false")
	case c == 'n':
		return w.literal("null")
	default:
		return w.fail(fmt.Sprintf("unexpected character %q", c))
	}
}

func (w *writer) literal(word string) error {
	if !bytes.HasPrefix(w.src[w.pos:], []byte(word)) {
		return w.fail("invalid literal")
	}
	w.pos += len(word)
	w.out = append(w.out, word...)
	return nil
}

func (w *writer) enter() error {
	if w.depth++; w.depth > maxDepth {
		return w.fail("nested too deeply")
	}
	return nil
}

func (w *writer) array() error {
	if err := w.enter(); err != nil {
		return err
	}
	w.pos++
	w.out = append(w.out, '[')
	w.skipSpace()
	if w.pos < len(w.src) && w.src[w.pos] == ']' {
		w.pos++
		w.out = append(w.out, ']')
		w.depth--
		return nil
	}
	oneObject := w.pos < len(w.src) && w.src[w.pos] == '{'
	for {
		w.skipSpace()
		if err := w.value(); err != nil {
			return err
		}
		w.skipSpace()
		if w.pos == len(w.src) {
			return w.fail("unexpected end of input in an array")
		}
		switch w.src[w.pos] {
		case ',':
			w.pos++
			w.out = append(w.out, ',')
			oneObject = false
		case ']':
			w.pos++
			w.out = append(w.out, ']')
			w.depth--
			if oneObject {
				w.oneObjectArrays++
			}
			return nil
		default:
			return w.fail("expected ',' or ']' in an array")
		}
	}
}

func (w *writer) object() error {
	if err := w.enter(); err != nil {
		return err
	}
	w.pos++
	w.out = append(w.out, '{')
	first, firstName, body := len(w.members), len(w.names), len(w.out)
	w.skipSpace()
	if w.pos < len(w.src) && w.src[w.pos] == '}' {
		w.pos++
		w.out = append(w.out, '}')
		w.depth--
		return nil
	}
	for {
		w.skipSpace()
		if w.pos == len(w.src) || w.src[w.pos] != '"' {
			return w.fail("expected a member name")
		}
		m := member{start: len(w.out)}
		text, err := w.string()
		if err != nil {
			return err
		}
		m.name = w.out[m.start+1 : len(w.out)-1]
		if text&escaped != 0 {
			from := len(w.names)
			w.names = unescapeCanonical(w.names, m.name)
			m.name = w.names[from:]
		}
		m.wide = text&wide != 0
		m.prefix = prefixOf(m.name)
		w.skipSpace()
		if w.pos == len(w.src) || w.src[w.pos] != ':' {
			return w.fail("expected ':' after a member name")
		}
		w.pos++
		w.out = append(w.out, ':')
		w.skipSpace()
		if err := w.value(); err != nil {
			return err
		}
		m.end = len(w.out)
		w.members = append(w.members, m)
		w.skipSpace()
		if w.pos == len(w.src) {
			return w.fail("unexpected end of input in an object")
		}
		if w.src[w.pos] == ',' {
			w.pos++
			w.out = append(w.out, ',')
			continue
		}
		if w.src[w.pos] != '}' {
			return w.fail("expected ',' or '}' in an object")
		}
		w.pos++
		break
	}
	if err := w.order(first, body); err != nil {
		return err
	}
	w.members = w.members[:first]
	w.names = w.names[:firstName]
	w.out = append(w.out, '}')
	w.depth--
	return nil
}

// order puts the members of the object closing now (w.members[first:],
// written from w.out[body:]) in canonical order, and refuses the object if
// two of them have the same name.
func (w *writer) order(first, body int) error {
	members := w.members[first:]
	sorted := true
	for i := 1; i < len(members); i++ {
		switch c := compare(&members[i-1], &members[i]); {
		case c == 0:
			return w.fail("duplicate member name")
		case c > 0:
			sorted = false
		}
	}
	if sorted {
		return nil
	}
	byName := w.byName[:0]
	var last *memberOrder
	if w.depth < orderedLevels {
		last = &w.lastAt[w.depth]
	}
	if last != nil && last.matches(members) {
		byName = append(byName, last.order...)
	} else {
		// Sorting places moves 4 bytes a swap rather than a whole member.
		for i := range members {
			byName = append(byName, int32(i))
		}
		slices.SortFunc(byName, func(a, b int32) int { return compare(&members[a], &members[b]) })
		for i := 1; i < len(byName); i++ {
			if compare(&members[byName[i-1]], &members[byName[i]]) == 0 {
				return w.fail("duplicate member name")
			}
		}
		if last != nil {
			last.remember(members, byName)
		}
	}
	w.byName = byName
	w.moved = append(w.moved[:0], w.out[body:]...)
	w.out = w.out[:body]
	for i, k := range byName {
		if i > 0 {
			w.out = append(w.out, ',')
		}
		m := &members[k]
		w.out = append(w.out, w.moved[m.start-body:m.end-body]...)
	}
	return nil
}

// compare orders members by their names' UTF-16 code units.
func compare(a, b *member) int {
	if a.wide && b.wide {
		return CompareNames(string(a.name), string(b.name))
	}
	if a.prefix != b.prefix {
		return cmp.Compare(a.prefix, b.prefix)
	}
	return bytes.Compare(a.name, b.name)
}

func prefixOf(name []byte) uint64 {
	if len(name) >= 8 {
		return binary.BigEndian.Uint64(name)
	}
	var p [8]byte
	copy(p[:], name)
	return binary.BigEndian.Uint64(p[:])
}

// stringText describes a string's text as string writes it.
type stringText uint8

const (
	// escaped: the canonical form has an escape, so a member name must be
	// unescaped to be ordered.
	escaped stringText = 1 << iota
	// wide: the text has a character from U+E000 up (a UTF-8 lead byte of
	// 0xEE or more).
	wide
)

// string writes the string at w.pos in its canonical form: only '"', '\\'
// and control characters escaped.
func (w *writer) string() (stringText, error) {
	start := w.pos
	var text stringText
	i := start + 1
	for i < len(w.src) {
		c := w.src[i]
		switch {
		case c == '"':
			w.out = append(w.out, w.src[start:i+1]...)
			w.pos = i + 1
			return text, nil
		case c == '\\':
			w.pos = i
			return w.escapedString(start, text)
		case c < 0x20:
			w.pos = i
			return 0, w.fail("control character in a string")
		case c < utf8.RuneSelf:
			i++
		default:
			r, size := utf8.DecodeRune(w.src[i:])
			if r == utf8.RuneError && size == 1 {
				w.pos = i
				return 0, w.fail("invalid UTF-8 in a string")
			}
			if c >= 0xee {
				text |= wide
			}
			i += size
		}
	}
	w.pos = i
	return 0, w.fail("unterminated string")
}

// escapedString goes on with the string that starts at start, from its
// first backslash at w.pos, unescaping what the canonical form writes
// plainly.
func (w *writer) escapedString(start int, text stringText) (stringText, error) {
	w.out = append(w.out, w.src[start:w.pos]...)
	for w.pos < len(w.src) {
		c := w.src[w.pos]
		switch {
		case c == '"':
			w.out = append(w.out, '"')
			w.pos++
			return text, nil
		case c == '\\':
			r, err := w.escape()
			if err != nil {
				return 0, err
			}
			switch {
			case r < 0x20 || r == '"' || r == '\\':
				w.out = appendEscape(w.out, byte(r))
				text |= escaped
			case r >= 0xe000:
				text |= wide
				fallthrough
			default:
				w.out = utf8.AppendRune(w.out, r)
			}
		case c < 0x20:
			return 0, w.fail("control character in a string")
		case c < utf8.RuneSelf:
			w.out = append(w.out, c)
			w.pos++
		default:
			r, size := utf8.DecodeRune(w.src[w.pos:])
			if r == utf8.RuneError && size == 1 {
				return 0, w.fail("invalid UTF-8 in a string")
			}
			if c >= 0xee {
				text |= wide
			}
			w.out = append(w.out, w.src[w.pos:w.pos+size]...)
			w.pos += size
		}
	}
	return 0, w.fail("unterminated string")
}

// escape reads the escape at w.pos and returns the character it stands for;
// a surrogate escape must be a high one followed by a low one.
func (w *writer) escape() (rune, error) {
	if w.pos+1 >= len(w.src) {
		return 0, w.fail("unterminated escape")
	}
	c := w.src[w.pos+1]
	w.pos += 2
	switch c {
	case '"', '\\', '/':
		return rune(c), nil
	case 'b':
		return '\b', nil
	case 'f':
		return '\f', nil
	case 'n':
		return '\n', nil
	case 'r':
		return '\r', nil
	case 't':
		return '\t', nil
	case 'u':
	default:
		return 0, w.fail("invalid escape")
	}
	r, err := w.hex4()
	if err != nil || !utf16.IsSurrogate(r) {
		return r, err
	}
	if r >= 0xdc00 {
		return 0, w.fail("lone low surrogate")
	}
	if w.pos+1 >= len(w.src) || w.src[w.pos] != '\\' || w.src[w.pos+1] != 'u' {
		return 0, w.fail("high surrogate without a low one")
	}
	w.pos += 2
	low, err := w.hex4()
	if err != nil {
		return 0, err
	}
	if low < 0xdc00 || low > 0xdfff {
		return 0, w.fail("high surrogate without a low one")
	}
	return utf16.DecodeRune(r, low), nil
}

func (w *writer) hex4() (rune, error) {
	if w.pos+4 > len(w.src) {
		return 0, w.fail("short \\u escape")
	}
	var r rune
	for _, c := range w.src[w.pos : w.pos+4] {
		switch {
		case c >= '0' && c <= '9':
			r = r<<4 | rune(c-'0')
		case c >= 'a' && c <= 'f':
			r = r<<4 | rune(c-'a'+10)
		case c >= 'A' && c <= 'F':
			r = r<<4 | rune(c-'A'+10)
		default:
			return 0, w.fail("invalid \\u escape")
		}
	}
	w.pos += 4
	return r, nil
}

// unescapeCanonical appends the text of a canonical string's contents,
// whose only escapes are those appendEscape writes.
func unescapeCanonical(dst, s []byte) []byte {
	for i := 0; i < len(s); i++ {
		if s[i] != '\\' {
			dst = append(dst, s[i])
			continue
		}
		i++
		switch s[i] {
		case 'b':
			dst = append(dst, '\b')
		case 'f':
			dst = append(dst, '\f')
		case 'n':
			dst = append(dst, '\n')
		case 'r':
			dst = append(dst, '\r')
		case 't':
			dst = append(dst, '\t')
		case 'u': // \u00xx
			dst = append(dst, unhex(s[i+3])<<4|unhex(s[i+4]))
			i += 4
		default: // '"' or '\\'
			dst = append(dst, s[i])
		}
	}
	return dst
}

func unhex(c byte) byte {
	if c <= '9' {
		return c - '0'
	}
	return c - 'a' + 10
}

// maxExactDigits is how many digits an integer may have to be written as it
// was received: every integer of up to 15 digits is a double exactly, and
// ECMAScript writes such a double with all its digits and no exponent.
const maxExactDigits = 15

// number writes the number at w.pos as ECMAScript writes the double it
// denotes (RFC 8785 section 3.2.2.3), refusing one beyond a double's range.
func (w *writer) number() error {
	start := w.pos
	if w.src[w.pos] == '-' {
		w.pos++
	}
	integer := w.pos
	switch {
	case w.pos < len(w.src) && w.src[w.pos] == '0':
		w.pos++
	case w.pos < len(w.src) && w.src[w.pos] >= '1' && w.src[w.pos] <= '9':
		w.digits()
	default:
		return w.fail("invalid number")
	}
	digits := w.pos - integer
	plain := true
	if w.pos < len(w.src) && w.src[w.pos] == '.' {
		w.pos++
		if w.digits() == 0 {
			return w.fail("invalid number")
		}
		plain = false
	}
	if w.pos < len(w.src) && (w.src[w.pos] == 'e' || w.src[w.pos] == 'E') {
		w.pos++
		if w.pos < len(w.src) && (w.src[w.pos] == '+' || w.src[w.pos] == '-') {
			w.pos++
		}
		if w.digits() == 0 {
			return w.fail("invalid number")
		}
		plain = false
	}
	text := w.src[start:w.pos]
	if plain && digits <= maxExactDigits && string(text) != "-0" {
		w.out = append(w.out, text...)
		return nil
	}
	f, err := strconv.ParseFloat(string(text), 64)
	if err != nil && (!errors.Is(err, strconv.ErrRange) || math.IsInf(f, 0)) {
		w.pos = start
		return w.fail("number beyond the range of a double")
	}
	s, err := jcs.NumberToJSON(f)
	if err != nil {
		w.pos = start
		return w.fail(err.Error())
	}
	w.out = append(w.out, s...)
	return nil
}

// digits skips the digits at w.pos and returns how many there were.
func (w *writer) digits() int {
	start := w.pos
	for w.pos < len(w.src) && w.src[w.pos] >= '0' && w.src[w.pos] <= '9' {
		w.pos++
	}
	return w.pos - start
}
