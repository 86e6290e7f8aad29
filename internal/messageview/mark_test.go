package messageview

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/lefia/edihub/internal/fingerprint"
	"github.com/lefia/edihub/internal/jsonindent"
)

// keyOf computes the key of payload as the message page does.
func keyOf(t *testing.T, payload string, paths ...string) Key {
	t.Helper()
	return explain(fingerprint.Input{MessageTypeID: 1, Paths: paths, Docnum: "1", Payload: []byte(payload)}, "")
}

// marked lists path=text of the marked segments, and checks that the
// segments are the whole text, in order.
func marked(t *testing.T, segs []Segment, want string) []string {
	t.Helper()
	var text strings.Builder
	var got []string
	for _, s := range segs {
		text.WriteString(s.Text)
		if s.Marked {
			got = append(got, s.Path+"="+s.Text)
		}
	}
	require.Equal(t, want, text.String(), "the segments are the whole payload, in order")
	return got
}

// indented is the payload as the page indents it; package jsonindent
// proves that text equal to json.Indent's.
func indented(t *testing.T, payload string) string {
	t.Helper()
	text, _, ok := jsonindent.Indent([]byte(payload), nil)
	require.True(t, ok)
	return string(text)
}

func TestMarkFindsKeyValuesInThePrettyPayload(t *testing.T) {
	t.Parallel()
	payload := `{"IDOC":{"E1EDK01":{"BELNR":"4500012345"},"items":[{"sku":"A-1"},{"sku":"B-2"}],"E1EDK02":null}}`
	key := keyOf(t, payload, "*.E1EDK01.BELNR", "IDOC.items.#.sku",
		"IDOC.items|@flatten", // computed by a modifier: listed, not marked
		"IDOC.E1EDK02")
	segs, ok := mark([]byte(payload), key)
	require.True(t, ok)
	require.Equal(t, []string{
		`*.E1EDK01.BELNR="4500012345"`, `IDOC.items.#.sku="A-1"`, `IDOC.items.#.sku="B-2"`,
	}, marked(t, segs, indented(t, payload)))
}

func TestMarkSkipsValuesInsideAMarkedValue(t *testing.T) {
	t.Parallel()
	payload := `{"a": {"b": "x"}}`
	segs, ok := mark([]byte(payload), keyOf(t, payload, "a", "a.b"))
	require.True(t, ok)
	require.Equal(t, []Segment{
		{Text: "{\n  \"a\": "},
		{Text: "{\n    \"b\": \"x\"\n  }", Marked: true, Path: "a"},
		{Text: "\n}"},
	}, segs)
}

func TestMarkNothingWhenTheDocnumWasUsed(t *testing.T) {
	t.Parallel()
	payload := `{"a": "x"}`
	segs, ok := mark([]byte(payload), keyOf(t, payload, "b"))
	require.True(t, ok)
	require.Equal(t, []Segment{{Text: indented(t, payload)}}, segs)
}

// TestMarkShowsADeepPayloadAsStored: indenting 500 levels would make each
// of the 100,000 numbers a line of 1,000 spaces, some 100 MB of page.
func TestMarkShowsADeepPayloadAsStored(t *testing.T) {
	t.Parallel()
	payload := `{"id":"A-1","deep":` + strings.Repeat("[", 500) + strings.TrimSuffix(strings.Repeat("1,", 100_000), ",") +
		strings.Repeat("]", 500) + "}"
	segs, ok := mark([]byte(payload), keyOf(t, payload, "id"))
	require.False(t, ok)
	require.Equal(t, []string{`id="A-1"`}, marked(t, segs, payload))
}
