package jsonindent

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func indented(t *testing.T, payload string) string {
	t.Helper()
	var b bytes.Buffer
	require.NoError(t, json.Indent(&b, []byte(payload), "", "  "))
	return b.String()
}

// A payload nested 500 deep: indenting it would make each of its 100,000
// numbers a line of 1,000 spaces, some 100 MB.
func TestIndentGivesUpBeyondTheLimit(t *testing.T) {
	t.Parallel()
	raw := []byte(strings.Repeat("[", 500) + strings.TrimSuffix(strings.Repeat("1,", 100_000), ",") + strings.Repeat("]", 500))
	_, _, ok := Indent(raw, nil)
	require.False(t, ok)
	_, _, ok = Indent([]byte(`{"a":[1,2,{"b":null}]}`), nil)
	require.True(t, ok)
}

func TestIndentMatchesJSONIndent(t *testing.T) {
	t.Parallel()
	samples, err := filepath.Glob(filepath.Join("..", "fingerprint", "testdata", "*.json"))
	require.NoError(t, err)
	require.NotEmpty(t, samples)
	for _, name := range samples {
		raw, err := os.ReadFile(name)
		require.NoError(t, err)
		raw = bytes.TrimSpace(raw)
		got, _, ok := Indent(raw, nil)
		require.True(t, ok)
		require.Equal(t, indented(t, string(raw)), string(got), name)
	}
}

// FuzzIndent checks indent against json.Indent on every valid JSON value,
// and that each cut lands where the text before it is the same.
func FuzzIndent(f *testing.F) {
	for _, seed := range []string{`{}`, `[]`, `{"a":[1,{},[],"x\"]"],"b":{"c":null}}`, ` [ 1 , 2 ] `, `"s"`, `{"a" : { } }`} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		if !json.Valid([]byte(raw)) {
			return
		}
		raw = strings.TrimSpace(raw)
		var want bytes.Buffer
		require.NoError(t, json.Indent(&want, []byte(raw), "", "  "))
		got, at, ok := indent([]byte(raw), []int{0, len(raw)}, 1<<30)
		require.True(t, ok)
		require.Equal(t, want.String(), string(got))
		require.Equal(t, []int{0, len(got)}, at)
	})
}
