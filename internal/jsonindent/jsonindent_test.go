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
	_, ok := Indent(raw, nil, 1<<20)
	require.False(t, ok)
	_, ok = Indent([]byte(`{"a":[1,2,{"b":null}]}`), nil, 1<<20)
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
		got, ok := Indent(raw, nil, 1<<30)
		require.True(t, ok)
		require.Equal(t, indented(t, string(raw)), string(got.Head), name)
		require.Equal(t, len(got.Head), got.Size)
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
		got, ok := indent([]byte(raw), []int{0, len(raw)}, 1<<30, 1<<30)
		require.True(t, ok)
		require.Equal(t, want.String(), string(got.Head))
		require.Equal(t, []int{0, want.Len()}, got.At)
		// Keeping only the start gives that start, and the same places.
		keep := len(raw) / 3
		head, ok := indent([]byte(raw), []int{0, len(raw)}, keep, 1<<30)
		require.True(t, ok)
		require.Equal(t, want.String()[:min(keep, want.Len())], string(head.Head))
		require.Equal(t, want.Len(), head.Size)
		require.Equal(t, got.At, head.At)
	})
}

// A large payload's text is counted whole but only its start is kept, so
// that a page showing the start never holds the rest.
func TestIndentKeepsOnlyTheStart(t *testing.T) {
	t.Parallel()
	raw := []byte(`{"items":[` + strings.TrimSuffix(strings.Repeat(`{"sku":"A-1"},`, 100_000), ",") + `],"id":"X"}`)
	want := indented(t, string(raw))
	cut := bytes.LastIndex(raw, []byte(`"X"`))
	p, ok := Indent(raw, []int{cut, cut + 3}, 1000)
	require.True(t, ok)
	require.Equal(t, want[:1000], string(p.Head))
	require.Equal(t, 1000, cap(p.Head), "nothing past the start was held")
	require.Equal(t, len(want), p.Size)
	require.Equal(t, `"X"`, want[p.At[0]:p.At[1]], "cuts land in the whole text")
}
