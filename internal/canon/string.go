package canon

import "unicode/utf8"

// hexDigits are lowercase, as RFC 8785 section 3.2.2.2 requires for \u
// escapes.
const hexDigits = "0123456789abcdef"

// AppendString appends s to dst as a JSON string literal serialised exactly as
// RFC 8785 serialises strings: only '"', '\\' and the control characters below
// U+0020 are escaped, using \b \t \n \f \r where they exist and \u00xx
// otherwise; everything else, including '<', '>', '&', U+007F and
// U+2028/U+2029, is written as plain UTF-8. This is why encoding/json, which
// escapes HTML characters and the line separators by default, cannot be used.
//
// A byte that is not part of valid UTF-8 is written as U+FFFD, as
// encoding/json does, so that the output is always valid canonical JSON and
// callers without an error path (RequestHash) stay total.
func AppendString(dst []byte, s string) []byte {
	dst = append(dst, '"')
	// start marks the beginning of a run of bytes that need no escaping, so
	// that plain text is copied in one append rather than byte by byte.
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c >= 0x20 && c != '"' && c != '\\' && c < utf8.RuneSelf {
			i++
			continue
		}
		if c >= utf8.RuneSelf {
			r, size := utf8.DecodeRuneInString(s[i:])
			if r != utf8.RuneError || size != 1 {
				i += size
				continue
			}
			dst = append(dst, s[start:i]...)
			dst = utf8.AppendRune(dst, utf8.RuneError)
			i++
			start = i
			continue
		}
		dst = append(dst, s[start:i]...)
		dst = appendEscape(dst, c)
		i++
		start = i
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}

// appendEscape appends the RFC 8785 escape of an ASCII byte that must not
// appear literally in a string: '"', '\\' or a control character.
func appendEscape(dst []byte, c byte) []byte {
	switch c {
	case '"', '\\':
		return append(dst, '\\', c)
	case '\b':
		return append(dst, '\\', 'b')
	case '\t':
		return append(dst, '\\', 't')
	case '\n':
		return append(dst, '\\', 'n')
	case '\f':
		return append(dst, '\\', 'f')
	case '\r':
		return append(dst, '\\', 'r')
	default:
		return append(dst, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
	}
}
