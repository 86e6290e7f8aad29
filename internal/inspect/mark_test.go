package inspect

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/lefia/edihub/internal/fingerprint"
)

func TestMarkFindsKeyValuesInThePrettyPayload(t *testing.T) {
	t.Parallel()
	pretty := `{
  "IDOC": {
    "E1EDK01": {
      "BELNR": "4500012345"
    },
    "items": [
      {
        "sku": "A-1"
      },
      {
        "sku": "B-2"
      }
    ]
  }
}`
	key := Key{Values: []fingerprint.Value{
		{Path: "*.E1EDK01.BELNR", JSON: `"4500012345"`},
		{Path: "IDOC.items.#.sku", JSON: `["A-1","B-2"]`},
		{Path: "IDOC.items|@reverse", JSON: `[]`}, // computed by a modifier: listed, not marked
		{Path: "IDOC.E1EDK02", JSON: "null", Missing: true},
	}}
	segs := mark(pretty, key)

	var text strings.Builder
	var marked []string
	for _, s := range segs {
		text.WriteString(s.Text)
		if s.Marked {
			marked = append(marked, s.Path+"="+s.Text)
		}
	}
	require.Equal(t, pretty, text.String(), "the segments are the whole payload, in order")
	require.Equal(t, []string{
		`*.E1EDK01.BELNR="4500012345"`, `IDOC.items.#.sku="A-1"`, `IDOC.items.#.sku="B-2"`,
	}, marked)
}

func TestMarkSkipsValuesInsideAMarkedValue(t *testing.T) {
	t.Parallel()
	pretty := "{\n  \"a\": {\n    \"b\": \"x\"\n  }\n}"
	segs := mark(pretty, Key{Values: []fingerprint.Value{{Path: "a", JSON: `{"b":"x"}`}, {Path: "a.b", JSON: `"x"`}}})
	require.Equal(t, []Segment{
		{Text: "{\n  \"a\": "},
		{Text: "{\n    \"b\": \"x\"\n  }", Marked: true, Path: "a"},
		{Text: "\n}"},
	}, segs)
}

func TestMarkNothingWhenTheDocnumWasUsed(t *testing.T) {
	t.Parallel()
	segs := mark(`{"a": "x"}`, Key{Fallback: fingerprint.FallbackAllMissing,
		Values: []fingerprint.Value{{Path: "b", JSON: "null", Missing: true}}})
	require.Equal(t, []Segment{{Text: `{"a": "x"}`}}, segs)
}
