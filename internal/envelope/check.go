package envelope

import (
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
func depth(body []byte) int {
	current, deepest := 0, 0
	inString, escaped := false, false
	for _, b := range body {
		switch {
		case inString && escaped:
			escaped = false
		case inString && b == '\\':
			escaped = true
		case inString && b == '"':
			inString = false
		case inString:
		case b == '"':
			inString = true
		case b == '{' || b == '[':
			current++
			if current > deepest {
				deepest = current
				if deepest > MaxDepth {
					return deepest
				}
			}
		case b == '}' || b == ']':
			current--
		}
	}
	return deepest
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
