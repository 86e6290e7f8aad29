package messageview

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/lefia/edihub/internal/fingerprint"
	"github.com/lefia/edihub/internal/jsonindent"
	"github.com/lefia/edihub/internal/keypath"
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
	text, ok := jsonindent.Indent([]byte(payload), nil, 1<<30)
	require.True(t, ok)
	return string(text.Head)
}

func TestMarkFindsKeyValuesInThePrettyPayload(t *testing.T) {
	t.Parallel()
	payload := `{"IDOC":{"E1EDK01":{"BELNR":"4500012345"},"items":[{"sku":"A-1"},{"sku":"B-2"}],"E1EDK02":null}}`
	key := keyOf(t, payload, "*.E1EDK01.BELNR", "IDOC.items.#.sku",
		"IDOC.items|@flatten", // computed by a modifier: listed, not marked
		"IDOC.E1EDK02")
	v := mark([]byte(payload), key)
	require.False(t, v.AsStored)
	require.False(t, v.Cut)
	require.Equal(t, []string{
		`*.E1EDK01.BELNR="4500012345"`, `IDOC.items.#.sku="A-1"`, `IDOC.items.#.sku="B-2"`,
	}, marked(t, v.Segments, indented(t, payload)))
}

func TestMarkSkipsValuesInsideAMarkedValue(t *testing.T) {
	t.Parallel()
	payload := `{"a": {"b": "x"}}`
	v := mark([]byte(payload), keyOf(t, payload, "a", "a.b"))
	require.False(t, v.AsStored)
	require.Equal(t, []Segment{
		{Text: "{\n  \"a\": "},
		{Text: "{\n    \"b\": \"x\"\n  }", Marked: true, Path: "a"},
		{Text: "\n}"},
	}, v.Segments)
}

func TestMarkNothingWhenTheDocnumWasUsed(t *testing.T) {
	t.Parallel()
	payload := `{"a": "x"}`
	v := mark([]byte(payload), keyOf(t, payload, "b"))
	require.Equal(t, []Segment{{Text: indented(t, payload)}}, v.Segments)
}

// TestMarkShowsADeepPayloadAsStored: indenting 500 levels would make each
// of the 100,000 numbers a line of 1,000 spaces, some 100 MB of page.
func TestMarkShowsADeepPayloadAsStored(t *testing.T) {
	t.Parallel()
	payload := `{"id":"A-1","deep":` + strings.Repeat("[", 500) + strings.TrimSuffix(strings.Repeat("1,", 100_000), ",") +
		strings.Repeat("]", 500) + "}"
	v := mark([]byte(payload), keyOf(t, payload, "id"))
	require.True(t, v.AsStored)
	require.Equal(t, []string{`id="A-1"`}, marked(t, v.Segments, payload))
}

// A payload whose text is longer than MaxShownBytes shows its start, up to
// the end of a line, with the key values in it marked; values further on
// are counted, and a value that runs past the end is marked as far as it
// is shown.
func TestMarkShowsTheStartOfALargePayload(t *testing.T) {
	t.Parallel()
	payload := `{"id":"A-1","items":[` + strings.TrimSuffix(strings.Repeat(`{"sku":"S"},`, 50_000), ",") + `],"last":"Z"}`
	whole := indented(t, payload)
	require.Greater(t, len(whole), MaxShownBytes)

	v := mark([]byte(payload), keyOf(t, payload, "id", "last"))
	require.True(t, v.Cut)
	require.Equal(t, len(payload), v.Bytes)
	require.Equal(t, 1, v.HiddenMarks, "the value of last lies past the part shown")
	text := strings.Join(marked(t, v.Segments, whole[:len(shownText(v))]), "")
	require.Equal(t, `id="A-1"`, text)
	require.LessOrEqual(t, len(shownText(v)), MaxShownBytes)
	require.True(t, strings.HasSuffix(shownText(v), "\n"), "cut at the end of a line")

	// A key value is at most 64 KiB, but the page may stop inside one.
	items := span{Span: keypath.Span{Start: strings.Index(payload, "["), End: strings.Index(payload, "]") + 1}, path: "items"}
	v = view([]byte(payload), []span{items})
	require.True(t, v.Cut)
	require.Zero(t, v.HiddenMarks)
	last := v.Segments[len(v.Segments)-1]
	require.True(t, last.Marked, "the items run past the cut, marked as far as shown")
	require.True(t, strings.HasPrefix(whole[len(shownText(v))-len(last.Text):], last.Text))
}

// shownText is the text the segments of v show.
func shownText(v PayloadView) string {
	var text strings.Builder
	for _, s := range v.Segments {
		text.WriteString(s.Text)
	}
	return text.String()
}

// A long line is cut on a character boundary, never inside one.
func TestExcerptKeepsCharactersWhole(t *testing.T) {
	t.Parallel()
	head := []byte(strings.Repeat("é", 10))
	require.Equal(t, head, excerpt(head, true))
	require.Equal(t, "ééééé", string(excerpt(head[:11], false)), "half of the sixth é is left out")
	require.Equal(t, "a\nbc\n", string(excerpt([]byte("a\nbc\nde"), false)), "up to the last line's end")
}
