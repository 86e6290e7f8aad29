package envelope

import (
	"bytes"
	"unicode/utf8"

	"github.com/tidwall/gjson"

	"github.com/lefia/edihub/internal/apperr"
)

// MaxDepth is the deepest nesting of objects and arrays accepted. IDocs nest
// a handful of levels; the limit keeps a hostile body (100,000 opening
// brackets, say) from costing recursive parsers stack and time.
const MaxDepth = 512

// CheckJSON verifies that body is one JSON value in valid UTF-8, nested no
// deeper than MaxDepth. Every body is checked before it is interpreted.
func CheckJSON(body []byte) error {
	if !utf8.Valid(body) {
		return apperr.New(apperr.Invalid, "malformed-json", "the body is not valid UTF-8")
	}
	if depth(body) > MaxDepth {
		return apperr.New(apperr.Invalid, "malformed-json", "the body nests deeper than %d levels", MaxDepth)
	}
	if !gjson.ValidBytes(body) {
		return apperr.New(apperr.Invalid, "malformed-json", "the body is not valid JSON")
	}
	return nil
}

// depth returns the deepest nesting of brackets outside strings. It scans
// once without recursion and stops counting as soon as the limit is passed.
// A string is skipped in one jump to its closing quote (bytes.IndexByte
// reads many bytes a step): a payload is mostly strings, and reading them
// byte by byte made this check half the cost of parsing an envelope.
func depth(body []byte) int {
	current, deepest := 0, 0
	for i := 0; i < len(body); i++ {
		switch body[i] {
		case '"':
			end := closingQuote(body, i+1)
			if end < 0 {
				// An unterminated string: the validator refuses the body.
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

// ParseRaw treats body as a payload on its own, as webhooks send it: the
// docnum, if any, comes from an IDoc control record inside it.
func ParseRaw(body []byte) (Envelope, error) {
	if err := CheckJSON(body); err != nil {
		return Envelope{}, err
	}
	docnum, err := detectedDocnum(body)
	return Envelope{Payload: body, Docnum: docnum}, err
}
