package canon

import (
	"cmp"
	"unicode/utf8"
)

// CompareNames orders object member names as RFC 8785 sorts them
// (section 3.2.3): by their UTF-16 code units, compared as unsigned
// numbers. That is the order of their code points, except that a
// character beyond U+FFFF, written as a surrogate pair (0xD800 to
// 0xDFFF), sorts before U+E000 to U+FFFF. For a writer of JSON that puts
// its members in canonical order by itself.
func CompareNames(a, b string) int {
	for a != "" && b != "" {
		if a[0] < utf8.RuneSelf && b[0] < utf8.RuneSelf {
			if a[0] != b[0] {
				return cmp.Compare(a[0], b[0])
			}
			a, b = a[1:], b[1:]
			continue
		}
		ra, na := utf8.DecodeRuneInString(a)
		rb, nb := utf8.DecodeRuneInString(b)
		if ra != rb {
			return cmp.Compare(utf16Units(ra), utf16Units(rb))
		}
		a, b = a[na:], b[nb:]
	}
	return cmp.Compare(len(a), len(b))
}

// utf16Units is r's UTF-16 code units as one number that orders as the
// units do: the first in the high half, the second (if any) in the low.
func utf16Units(r rune) uint32 {
	if r < 0x10000 {
		return uint32(r) << 16
	}
	r -= 0x10000
	return (0xD800+uint32(r)>>10)<<16 | (0xDC00 + uint32(r)&0x3FF)
}
