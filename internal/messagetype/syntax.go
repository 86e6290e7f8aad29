package messagetype

import (
	"fmt"
	"strings"

	"github.com/tidwall/gjson"
)

// probes are documents every path is evaluated against once, so that a
// path gjson cannot evaluate is refused when it is saved rather than when
// the first message arrives.
var probes = []string{`{}`, `[]`, `{"a":[{"b":1},{"b":"x"}],"c":{"d":null}}`}

// closerOf pairs each closing bracket with its opening one.
var closerOf = map[byte]byte{')': '(', ']': '[', '}': '{'}

// syntaxProblem says why gjson cannot use path, or returns "" when it can.
// gjson has no validator: it reads almost any text as a path, and a mistyped
// one simply matches nothing, which silently turns deduplication off. This
// catches the mistakes that certainly match nothing in any payload an
// integration sends: a bracket or quote left open or closed twice, and an
// empty last step. Everything else (a misspelt key, a query that selects
// nothing) is syntactically fine, and only a payload can show it; the
// editor's preview and match shares are there for that.
//
// A literal bracket, quote or dot in a key name is written with a
// backslash, as gjson.Escape writes it, so it never counts here.
func syntaxProblem(path string) (problem string) {
	defer func() {
		if r := recover(); r != nil {
			problem = fmt.Sprintf("gjson fails on it (%v)", r)
		}
	}()
	for _, doc := range probes {
		gjson.Get(doc, path)
	}

	type opening struct {
		char byte
		pos  int
	}
	var open []opening
	quoteAt := -1 // position of the quote that opened the current string, -1 outside strings
	lastEscaped := false
	for i := 0; i < len(path); i++ {
		c := path[i]
		lastEscaped = false
		switch {
		case c == '\\':
			i++ // the next character is literal
			lastEscaped = true
		case quoteAt >= 0:
			if c == '"' {
				quoteAt = -1
			}
		case c == '"':
			quoteAt = i
		case c == '(' || c == '[' || c == '{':
			open = append(open, opening{c, i})
		case closerOf[c] != 0:
			if len(open) == 0 {
				return fmt.Sprintf(`the %q at position %d closes nothing (write \%c for the character itself)`, c, i+1, c)
			}
			if top := open[len(open)-1]; top.char != closerOf[c] {
				return fmt.Sprintf("the %q at position %d does not close the %q at position %d", c, i+1, top.char, top.pos+1)
			}
			open = open[:len(open)-1]
		}
	}
	switch {
	case quoteAt >= 0:
		return fmt.Sprintf("the quote at position %d is not closed", quoteAt+1)
	case len(open) > 0:
		top := open[len(open)-1]
		return fmt.Sprintf("the %q at position %d is not closed", top.char, top.pos+1)
	case !lastEscaped && (strings.HasSuffix(path, ".") || strings.HasSuffix(path, "|")):
		return fmt.Sprintf("it ends with %q, so its last step is empty and matches nothing", path[len(path)-1:])
	}
	return ""
}
