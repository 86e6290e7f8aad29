package identifier

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestProblem(t *testing.T) {
	t.Parallel()
	for _, ok := range []string{"0000000064132944", "PO-4711/ä", "日本語", ""} {
		require.Empty(t, Problem(ok, 255), ok)
	}
	for s, want := range map[string]string{
		"a\x00b":                 "U+0000 at byte 2",
		"a\xffb":                 "not valid UTF-8",
		"invoice\u202Egpj.exe":   "U+202E at byte 8",
		"\x1b[31mred":            "U+001B at byte 1",
		"line\r\nbreak":          "U+000D",
		"zero\u200Bwidth":        "U+200B",
		"sep\u2028arator":        "U+2028",
		strings.Repeat("a", 256): "longer than 255 bytes",
	} {
		require.Contains(t, Problem(s, 255), want, "%q", s)
	}
}

func TestVisible(t *testing.T) {
	t.Parallel()
	require.Equal(t, "plain äöü", Visible("plain äöü"))
	require.Equal(t, `invoice\u202egpj.exe`, Visible("invoice\u202Egpj.exe"))
	require.Equal(t, `\x1b[31mred\r\n`, Visible("\x1b[31mred\r\n"))
	require.Equal(t, `a\x00b\xffc`, Visible("a\x00b\xffc"))
}
