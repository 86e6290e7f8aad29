package canon_test

import (
	"slices"
	"testing"
	"unicode/utf16"

	"github.com/stretchr/testify/require"

	"github.com/lefia/edihub/internal/canon"
)

// CompareNames sorts member names as RFC 8785 does: its own example
// (section 3.2.3) and a character beyond U+FFFF against one just below it.
func TestCompareNamesSortsAsRFC8785(t *testing.T) {
	t.Parallel()
	names := []string{"\u20ac", "\r", "\ufb33", "1", "\U0001f600", "\u0080", "\u00f6"}
	slices.SortFunc(names, canon.CompareNames)
	require.Equal(t, []string{"\r", "1", "\u0080", "\u00f6", "\u20ac", "\U0001f600", "\ufb33"}, names)

	require.Negative(t, canon.CompareNames("\U0001f600", "\uffff"), "a surrogate pair sorts before U+FFFF")
	require.Negative(t, canon.CompareNames("ab", "abc"), "a prefix first")
	require.Zero(t, canon.CompareNames("E1EDK01", "E1EDK01"))
	require.Positive(t, canon.CompareNames("EDI_DC40", "E1EDK01"))
	require.Negative(t, canon.CompareNames("@SEGMENT", "A"))
}

// CompareNames agrees with comparing the names' UTF-16 code units, on
// any pair of strings.
func FuzzCompareNames(f *testing.F) {
	f.Add("E1EDP01", "E1EDK01")
	f.Add("\U0001f600", "\ue000")
	f.Fuzz(func(t *testing.T, a, b string) {
		want := slices.Compare(utf16.Encode([]rune(a)), utf16.Encode([]rune(b)))
		require.Equal(t, want, canon.CompareNames(a, b), "%q %q", a, b)
	})
}
