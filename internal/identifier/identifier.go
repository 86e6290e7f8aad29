// Package identifier holds the rule for text that edihub takes from outside
// and keeps or looks up as a name: a docnum, a filter value, a delivery id.
// Such text must be valid UTF-8 of bounded length without control, format
// or line-separator characters. PostgreSQL cannot store a NUL byte or
// invalid UTF-8 at all, so letting either through turns a bad request into
// a server error that a sender would retry for ever; and a right-to-left
// override, an escape sequence or a line break lets one identifier pose as
// another on an admin's screen or in a log line.
package identifier

import (
	"fmt"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Problem says why s cannot be an identifier of at most maxBytes bytes, as
// the end of a sentence about the named field ("docnum is …"), or returns
// "" when s is acceptable. It never repeats s, which may be huge or hostile.
func Problem(s string, maxBytes int) string {
	if len(s) > maxBytes {
		return fmt.Sprintf("longer than %d bytes", maxBytes)
	}
	if !utf8.ValidString(s) {
		return "not valid UTF-8"
	}
	for i, r := range s {
		if Hidden(r) {
			return fmt.Sprintf("holding the invisible or control character %U at byte %d", r, i+1)
		}
	}
	return ""
}

// Hidden reports whether r is a character that an identifier may not hold:
// a control character (NUL, ESC, CR, LF, …), a format character (the
// bidirectional overrides and isolates such as U+202E, zero-width joiners)
// or a line or paragraph separator.
func Hidden(r rune) bool {
	return unicode.In(r, unicode.Cc, unicode.Cf, unicode.Zl, unicode.Zp)
}

// Visible returns s for display with every hidden character, and every
// byte of invalid UTF-8, written as an escape (\u202e, \x1b, \xff), so that
// text stored before these rules, taken from a payload or chosen by a
// destination (its answer), shows what it holds instead of reordering or
// hiding what follows it. It is the one such helper of every admin page.
func Visible(s string) string {
	if !needsEscape(s) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size <= 1:
			fmt.Fprintf(&b, `\x%02x`, s[i])
		case Hidden(r):
			b.WriteString(strings.Trim(strconv.QuoteRuneToASCII(r), "'"))
		default:
			b.WriteString(s[i : i+size])
		}
		i += size
	}
	return b.String()
}

func needsEscape(s string) bool {
	if !utf8.ValidString(s) {
		return true
	}
	return strings.ContainsFunc(s, Hidden)
}
