package envelope

import (
	"bytes"
	"encoding/binary"
	"math/bits"
	"unicode/utf8"

	"github.com/lefia/edihub/internal/apperr"
)

// MaxDepth is the deepest nesting of objects and arrays accepted. IDocs nest
// a handful of levels; the limit keeps a hostile body (100,000 opening
// brackets, say) from costing recursive parsers stack and time.
const MaxDepth = 512

// expectation is what the validator may read next, whitespace aside.
type expectation uint8

const (
	expectValue        expectation = iota // at the top, after a colon, after a comma in an array
	expectValueOrClose                    // after '['
	expectKey                             // after a comma in an object
	expectKeyOrClose                      // after '{'
	expectColon                           // after a key
	expectCommaOrClose                    // after a value inside an object or array
	expectNothing                         // after the top-level value
)

// CheckJSON verifies that body is one JSON value (RFC 8259, as
// gjson.ValidBytes reads it) in valid UTF-8, nested no deeper than MaxDepth.
// Every body is checked before it is interpreted, so it is read once, without
// recursion: structure byte by byte, string content eight bytes a step up to
// the next quote, backslash, control character or non-ASCII byte, and UTF-8
// only for runs of non-ASCII bytes (outside strings such a byte is no JSON).
// On the first fault the rest of the body is handed to refusal, which names
// the fault as the three separate checks this pass replaced did.
func CheckJSON(body []byte) error {
	return check(body, nil)
}

// check is CheckJSON, noting in ends, when it is not nil, where each of the
// containers within its outermost levels ends.
func check(body []byte, ends *containerEnds) error {
	var closers [MaxDepth]byte // the bracket closing each open container, innermost last
	open := 0
	want := expectValue
	for i := 0; ; {
		i = skipSpace(body, i)
		if i == len(body) {
			if want == expectNothing {
				return nil
			}
			return refusal(body[i:], open)
		}
		c := body[i]
		switch want {
		case expectCommaOrClose:
			switch c {
			case ',':
				i++
				want = expectValue
				if closers[open-1] == '}' {
					want = expectKey
				}
				continue
			case closers[open-1]:
				i++
				open--
				ends.closed(open, i)
				want = afterValue(open)
				continue
			}
			return refusal(body[i:], open)
		case expectColon:
			if c != ':' {
				return refusal(body[i:], open)
			}
			i++
			want = expectValue
			continue
		case expectKeyOrClose:
			if c == '}' {
				i++
				open--
				ends.closed(open, i)
				want = afterValue(open)
				continue
			}
			fallthrough
		case expectKey:
			end := -1
			if c == '"' {
				end = stringEnd(body, i+1)
			}
			if end < 0 {
				return refusal(body[i:], open)
			}
			i = end
			want = expectColon
			continue
		case expectValueOrClose:
			if c == ']' {
				i++
				open--
				ends.closed(open, i)
				want = afterValue(open)
				continue
			}
		case expectNothing:
			return refusal(body[i:], open)
		}

		// A value is expected at i: want is expectValue, or expectValueOrClose
		// without its bracket.
		end := -1
		switch c {
		case '{', '[':
			if open == MaxDepth {
				break
			}
			closers[open] = ']'
			want = expectValueOrClose
			if c == '{' {
				closers[open] = '}'
				want = expectKeyOrClose
			}
			ends.opened(open, i)
			open++
			i++
			continue
		case '"':
			end = stringEnd(body, i+1)
		case 't':
			end = literalEnd(body, i, "true")
		case 'f':
			end = literalEnd(body, i, "false")
		case 'n':
			end = literalEnd(body, i, "null")
		default:
			end = numberEnd(body, i)
		}
		if end < 0 {
			return refusal(body[i:], open)
		}
		i = end
		want = afterValue(open)
	}
}

// afterValue is what follows a complete value with open containers still
// open around it.
func afterValue(open int) expectation {
	if open == 0 {
		return expectNothing
	}
	return expectCommaOrClose
}

// skipSpace is the offset of the first byte from i on that is not JSON's
// whitespace, or the body's length.
func skipSpace(body []byte, i int) int {
	for i < len(body) && isSpace(body[i]) {
		i++
	}
	return i
}

func isSpace(c byte) bool {
	return c == ' ' || c == '\n' || c == '\r' || c == '\t'
}

// refusal names what is wrong with a body whose bytes before rest are valid
// UTF-8 and the valid beginning of a JSON text, with open containers open,
// none deeper than MaxDepth, and rest not starting inside a string. A
// refused body keeps the message it got when UTF-8, depth and grammar were
// three checks of the whole body in that order: invalid UTF-8 anywhere
// first, then nesting past MaxDepth as depth counts it (bracket by bracket
// whatever the grammar, so "1 [[[…" is too deep rather than malformed), then
// the grammar.
func refusal(rest []byte, open int) error {
	if !utf8.Valid(rest) {
		return apperr.New(apperr.Invalid, "malformed-json", "the body is not valid UTF-8")
	}
	if depth(rest, open) > MaxDepth {
		return apperr.New(apperr.Invalid, "malformed-json", "the body nests deeper than %d levels", MaxDepth)
	}
	return apperr.New(apperr.Invalid, "malformed-json", "the body is not valid JSON")
}

// depth returns the deepest nesting of brackets outside strings, counting
// from open containers opened before body. It scans once without recursion
// and stops counting as soon as the limit is passed, or at an unterminated
// string: the body is refused as malformed then, however deep what follows.
// A string is skipped in one jump to its closing quote (bytes.IndexByte
// reads many bytes a step).
func depth(body []byte, open int) int {
	current, deepest := open, open
	for i := 0; i < len(body); i++ {
		switch body[i] {
		case '"':
			end := closingQuote(body, i+1)
			if end < 0 {
				return deepest
			}
			i = end
		case '{', '[':
			current++
			if current > deepest {
				deepest = current
				if deepest > MaxDepth {
					return deepest
				}
			}
		case '}', ']':
			current--
		}
	}
	return deepest
}

// closingQuote returns the index of the quote that ends the string whose
// content starts at from, or -1 when there is none: the first quote not
// escaped, that is not preceded by an odd number of backslashes.
func closingQuote(body []byte, from int) int {
	for {
		j := bytes.IndexByte(body[from:], '"')
		if j < 0 {
			return -1
		}
		quote := from + j
		backslashes := 0
		for k := quote - 1; k >= from && body[k] == '\\'; k-- {
			backslashes++
		}
		if backslashes%2 == 0 {
			return quote
		}
		from = quote + 1
	}
}

// stringEnd returns the index just past the quote closing the string whose
// content starts at i, or -1 when the string is unterminated or holds a
// control character, an escape JSON does not have, or invalid UTF-8. As in
// gjson, \u takes any four hex digits: a lone surrogate is valid JSON here
// and refused where a field's value is read.
//
// Plain content is skipped eight bytes a step, finding the first byte a
// string cannot hold as it is: a quote, a backslash, a control character or
// a byte of 0x80 and above. Subtracting 1 from each byte of the word XORed
// with quotes (or backslashes) sets the high bit of a byte that was a quote,
// and subtracting 0x20 that of a control character; a byte of 0x80 and
// above has it already, and may set it again, as may a byte above one found,
// through the borrow. A borrow only starts at a byte found, so the lowest
// high bit set marks the first.
func stringEnd(body []byte, i int) int {
	const ones, highs = 0x0101010101010101, 0x8080808080808080
	for {
		for len(body)-i >= 8 {
			w := binary.LittleEndian.Uint64(body[i:])
			quotes := w ^ (ones * '"')
			backslashes := w ^ (ones * '\\')
			found := ((quotes - ones) | (backslashes - ones) | (w - ones*' ') | w) & highs
			if found != 0 {
				i += bits.TrailingZeros64(found) / 8
				break
			}
			i += 8
		}
		for i < len(body) && body[i] != '"' && body[i] != '\\' && ' ' <= body[i] && body[i] < utf8.RuneSelf {
			i++
		}
		if i == len(body) {
			return -1
		}
		switch c := body[i]; {
		case c == '"':
			return i + 1
		case c == '\\':
			if i+1 == len(body) {
				return -1
			}
			switch body[i+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				i += 2
			case 'u':
				if len(body)-i < 6 || !isHex(body[i+2]) || !isHex(body[i+3]) || !isHex(body[i+4]) || !isHex(body[i+5]) {
					return -1
				}
				i += 6
			default:
				return -1
			}
		case c >= utf8.RuneSelf:
			// A character of several bytes is made of bytes of 0x80 and
			// above alone, so a run of them holds whole characters.
			j := i + 1
			for j < len(body) && body[j] >= utf8.RuneSelf {
				j++
			}
			if !utf8.Valid(body[i:j]) {
				return -1
			}
			i = j
		default: // a control character
			return -1
		}
	}
}

// numberEnd returns the index just past the number starting at i, or -1
// when none starts there: an optional minus, 0 or digits not starting with
// 0, an optional fraction and an optional exponent. What may follow it is
// left to the caller, so "01" ends after the 0 and is refused there.
func numberEnd(body []byte, i int) int {
	if body[i] == '-' {
		i++
	}
	switch {
	case i == len(body):
		return -1
	case body[i] == '0':
		i++
	case isDigit(body[i]):
		i = digitsEnd(body, i+1)
	default:
		return -1
	}
	if i < len(body) && body[i] == '.' {
		if i++; i == len(body) || !isDigit(body[i]) {
			return -1
		}
		i = digitsEnd(body, i+1)
	}
	if i < len(body) && (body[i] == 'e' || body[i] == 'E') {
		i++
		if i < len(body) && (body[i] == '+' || body[i] == '-') {
			i++
		}
		if i == len(body) || !isDigit(body[i]) {
			return -1
		}
		i = digitsEnd(body, i+1)
	}
	return i
}

func digitsEnd(body []byte, i int) int {
	for i < len(body) && isDigit(body[i]) {
		i++
	}
	return i
}

// literalEnd returns the index just past word at i, or -1 when word is not
// there.
func literalEnd(body []byte, i int, word string) int {
	if len(body)-i < len(word) || string(body[i:i+len(word)]) != word {
		return -1
	}
	return i + len(word)
}

func isDigit(c byte) bool { return '0' <= c && c <= '9' }

func isHex(c byte) bool {
	return isDigit(c) || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

// ParseRaw treats body as a payload on its own, as webhooks send it: the
// docnum, if any, comes from an IDoc control record inside it.
func ParseRaw(body []byte) (Envelope, error) {
	if err := CheckJSON(body); err != nil {
		return Envelope{}, err
	}
	docnum, err := detectedDocnum(body)
	return Envelope{Payload: body, Docnum: docnum}, err
}
