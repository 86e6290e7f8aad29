package idocxml

import (
	"encoding/xml"
	"errors"
	"io"
	"regexp"
	"unicode/utf8"
)

// errNotPlain says that the scanner met something outside the plain XML it
// reads; the document is then read again with encoding/xml.
var errNotPlain = errors.New("not plain XML")

// scanner reads the plain XML SAP writes, several times faster than
// encoding/xml: an XML declaration at the start; elements and attributes
// with ASCII names without prefixes; text and attribute values of any
// XML character but carriage returns, with the five predefined entities.
// Whatever else it meets (comments, CDATA, character references, prefixes,
// declarations, and every error) it leaves to encoding/xml by returning
// errNotPlain, so the documents it reads are those encoding/xml reads
// alike: the tokens it returns are RawToken's, and its offset after each is
// InputOffset's.
type scanner struct {
	in  []byte
	pos int
	// A self-closing element's end, due next.
	pendingEnd  bool
	pendingName string
	attrs       []xml.Attr
	buf         []byte
	// Names and short values, so that each costs one string a document.
	strings map[string]string
	// recent holds strings interned before, each in the slot its bytes
	// hash to (recentSlot), looked at before the map: a document repeats
	// a few dozen names, and the map's look-up was a fifth of reading it.
	recent [256]string
}

// plainDeclaration is the XML declaration the scanner takes: version 1.0,
// an encoding of any name (Parse has decoded the body already), and a
// standalone declaration, each quoted alike.
var plainDeclaration = regexp.MustCompile(`^<\?xml version=(?:"1\.0"|'1\.0')` +
	`(?: encoding=(?:"[A-Za-z][A-Za-z0-9._-]*"|'[A-Za-z][A-Za-z0-9._-]*'))?` +
	`(?: standalone=(?:"(?:yes|no)"|'(?:yes|no)'))? ?\?>`)

// next reads the next token into t; io.EOF at the end of the input. An
// end tag must close innermost, the innermost open element's name ("" when
// none is open): it is compared in place, so that it costs no look-up of
// its name, and any other is not plain.
func (s *scanner) next(t *token, innermost string) error {
	if s.pendingEnd {
		s.pendingEnd = false
		t.kind, t.name.Local = endToken, s.pendingName
		return nil
	}
	if s.pos >= len(s.in) {
		return io.EOF
	}
	if s.in[s.pos] != '<' {
		text, end, err := s.text(s.pos, -1)
		if err != nil {
			return err
		}
		s.pos = end
		t.kind, t.text = textToken, text
		return nil
	}
	if s.pos+1 >= len(s.in) {
		return errNotPlain
	}
	switch s.in[s.pos+1] {
	case '/':
		start := s.pos + 2
		end := start + len(innermost)
		if innermost == "" || end > len(s.in) || string(s.in[start:end]) != innermost ||
			(end < len(s.in) && nameByte[s.in[end]] != 0) {
			return errNotPlain
		}
		i := s.space(end)
		if i >= len(s.in) || s.in[i] != '>' {
			return errNotPlain
		}
		s.pos = i + 1
		t.kind, t.name.Local = endToken, innermost
		return nil
	case '?':
		m := plainDeclaration.FindIndex(s.in[s.pos:min(len(s.in), s.pos+128)])
		if s.pos != 0 || m == nil {
			return errNotPlain
		}
		s.pos = m[1]
		t.kind = otherToken
		return nil
	case '!':
		return errNotPlain
	}
	return s.startTag(t)
}

func (s *scanner) startTag(t *token) error {
	name, i, err := s.name(s.pos + 1)
	if err != nil {
		return err
	}
	s.attrs = s.attrs[:0]
	for {
		j := s.space(i)
		if j >= len(s.in) {
			return errNotPlain
		}
		switch s.in[j] {
		case '>':
			s.pos = j + 1
			t.kind, t.name.Local, t.attrs = startToken, name, s.attrs
			return nil
		case '/':
			if j+1 >= len(s.in) || s.in[j+1] != '>' {
				return errNotPlain
			}
			s.pos = j + 2
			s.pendingEnd, s.pendingName = true, name
			t.kind, t.name.Local, t.attrs = startToken, name, s.attrs
			return nil
		}
		if j == i {
			return errNotPlain // no space before the attribute
		}
		var a xml.Attr
		if a.Name.Local, i, err = s.name(j); err != nil {
			return err
		}
		if i = s.space(i); i >= len(s.in) || s.in[i] != '=' {
			return errNotPlain
		}
		if i = s.space(i + 1); i >= len(s.in) || (s.in[i] != '"' && s.in[i] != '\'') {
			return errNotPlain
		}
		value, end, err := s.text(i+1, int(s.in[i]))
		if err != nil {
			return err
		}
		a.Value = s.intern(value, 16)
		s.attrs = append(s.attrs, a)
		i = end
	}
}

// space skips the spaces at i.
func (s *scanner) space(i int) int {
	for i < len(s.in) && (s.in[i] == ' ' || s.in[i] == '\t' || s.in[i] == '\n') {
		i++
	}
	return i
}

// nameByte tells the bytes of a plain name: an ASCII letter or '_' first,
// then also digits, '.' and '-'.
var nameByte = func() (t [256]uint8) {
	for c := range 256 {
		switch {
		case 'A' <= c && c <= 'Z', 'a' <= c && c <= 'z', c == '_':
			t[c] = 2
		case '0' <= c && c <= '9', c == '.', c == '-':
			t[c] = 1
		}
	}
	return t
}()

// name reads the plain name at i and returns it with the offset after it.
// A name that goes on with a prefix's colon or a non-ASCII letter is not
// plain.
func (s *scanner) name(i int) (string, int, error) {
	start := i
	if i >= len(s.in) || nameByte[s.in[i]] != 2 {
		return "", 0, errNotPlain
	}
	for i < len(s.in) && nameByte[s.in[i]] != 0 {
		i++
	}
	if i >= len(s.in) || s.in[i] == ':' || s.in[i] >= utf8.RuneSelf {
		return "", 0, errNotPlain
	}
	return s.intern(s.in[start:i], 64), i, nil
}

// intern returns b as a string, shared with earlier equal ones when b is
// no longer than max.
func (s *scanner) intern(b []byte, max int) string {
	if len(b) > max {
		return string(b)
	}
	slot := recentSlot(b)
	if v := s.recent[slot]; v == string(b) {
		return v
	}
	v, ok := s.strings[string(b)]
	if !ok {
		v = string(b)
	}
	s.recent[slot] = v
	if !ok && len(s.strings) < 4096 {
		if s.strings == nil {
			s.strings = make(map[string]string)
		}
		s.strings[v] = v
	}
	return v
}

// recentSlot is b's slot in scanner.recent.
func recentSlot(b []byte) uint8 {
	h := uint32(len(b))
	for _, c := range b {
		h = h*31 + uint32(c)
	}
	return uint8(h ^ h>>8)
}

// entities are the predefined entities, the only references taken.
var entities = [...]struct {
	ref  string
	char byte
}{{"&amp;", '&'}, {"&lt;", '<'}, {"&gt;", '>'}, {"&apos;", '\''}, {"&quot;", '"'}}

// text reads text from i up to '<' (quote < 0) or to the closing quote,
// and returns it with the offset after it (after the quote). The text is
// the input's own bytes unless it holds entities.
func (s *scanner) text(i, quote int) ([]byte, int, error) {
	start, decoded := i, false
	s.buf = s.buf[:0]
	for i < len(s.in) {
		c := s.in[i]
		switch {
		case c == '<':
			if quote >= 0 {
				return nil, 0, errNotPlain
			}
			return s.textResult(start, i, decoded), i, nil
		case int(c) == quote:
			return s.textResult(start, i, decoded), i + 1, nil
		case c == '&':
			n := 0
			for _, e := range entities {
				if len(s.in)-i >= len(e.ref) && string(s.in[i:i+len(e.ref)]) == e.ref {
					s.buf = append(append(s.buf, s.in[start:i]...), e.char)
					n = len(e.ref)
					break
				}
			}
			if n == 0 {
				return nil, 0, errNotPlain
			}
			i += n
			start, decoded = i, true
		case c == ']':
			if quote < 0 && len(s.in)-i >= 3 && s.in[i+1] == ']' && s.in[i+2] == '>' {
				return nil, 0, errNotPlain
			}
			i++
		case c < 0x20:
			if c != '\t' && c != '\n' {
				return nil, 0, errNotPlain // carriage returns are rewritten by encoding/xml
			}
			i++
		case c < utf8.RuneSelf:
			i++
		default:
			r, size := utf8.DecodeRune(s.in[i:])
			if r == utf8.RuneError && size == 1 || !isInCharacterRange(r) {
				return nil, 0, errNotPlain
			}
			i += size
		}
	}
	if quote >= 0 {
		return nil, 0, errNotPlain
	}
	return s.textResult(start, i, decoded), i, nil
}

func (s *scanner) textResult(start, end int, decoded bool) []byte {
	if !decoded {
		return s.in[start:end]
	}
	s.buf = append(s.buf, s.in[start:end]...)
	return s.buf
}

// isInCharacterRange is encoding/xml's: the characters XML 1.0 allows.
func isInCharacterRange(r rune) bool {
	return r == 0x09 || r == 0x0A || r == 0x0D ||
		r >= 0x20 && r <= 0xD7FF ||
		r >= 0xE000 && r <= 0xFFFD ||
		r >= 0x10000 && r <= 0x10FFFF
}
