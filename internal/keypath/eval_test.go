package keypath_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/lefia/edihub/internal/keypath"
)

func mustParse(t testing.TB, text string) keypath.Path {
	t.Helper()
	p, err := keypath.Parse(text)
	require.NoError(t, err, text)
	return p
}

func TestGetReadsThePresetPath(t *testing.T) {
	t.Parallel()
	p := mustParse(t, `[*.IDOC.E1EDK02]|@flatten|#(QUALF=="009").BELNR`)
	for _, payload := range []string{
		`{"INVOIC02":{"IDOC":{"E1EDK02":{"QUALF":"009","BELNR":"90001"}}}}`,
		`{"INVOIC02":{"IDOC":{"E1EDK02":[{"QUALF":"001","BELNR":"4500"},{"QUALF":"009","BELNR":"90001"}]}}}`,
	} {
		r, err := p.Get([]byte(payload))
		require.NoError(t, err)
		require.Equal(t, "90001", r.String())
	}
}

func TestGetRefusesValuesBeyondTheLimits(t *testing.T) {
	t.Parallel()
	big := `{"a":"` + strings.Repeat("x", keypath.MaxValueBytes) + `","b":"ok"}`
	_, err := mustParse(t, "a").Get([]byte(big))
	var le *keypath.LimitError
	require.ErrorAs(t, err, &le)
	require.Equal(t, "value size", le.Limit)
	require.ErrorContains(t, err, fmt.Sprintf("the value is %d bytes; a key value may be at most %d bytes",
		keypath.MaxValueBytes+2, keypath.MaxValueBytes))
	r, err := mustParse(t, "b").Get([]byte(big))
	require.NoError(t, err)
	require.Equal(t, "ok", r.String())

	items := make([]string, keypath.MaxElements+1)
	for i := range items {
		items[i] = fmt.Sprintf(`{"n":%d}`, i)
	}
	many := []byte(`{"items":[` + strings.Join(items, ",") + `]}`)
	_, err = mustParse(t, "items.#.n").Get(many)
	require.ErrorAs(t, err, &le)
	require.Equal(t, "elements", le.Limit)
	require.ErrorContains(t, err, "more than 1000 elements")
	r, err = mustParse(t, "items.#").Get(many)
	require.NoError(t, err)
	require.Equal(t, int64(keypath.MaxElements+1), r.Int())
	r, err = mustParse(t, `items.#(n<1000)#.n`).Get(many)
	require.NoError(t, err)
	require.Len(t, r.Array(), keypath.MaxElements)
}

// Each path of a multipath is held to the value limit before the array is
// built, so the stages after it never read copies of a large payload.
func TestGetBoundsEachPathOfAMultipath(t *testing.T) {
	t.Parallel()
	items := make([]string, 3000)
	for i := range items {
		items[i] = fmt.Sprintf(`{"sku":"SKU-%04d","qty":%d}`, i, i%9)
	}
	payload := []byte(`{"small":{"sku":"S","qty":1},"items":[` + strings.Join(items, ",") + `]}`)
	_, err := mustParse(t, `[small,items]|@flatten`).Get(payload)
	var le *keypath.LimitError
	require.ErrorAs(t, err, &le)
	require.ErrorContains(t, err, "path 2 of the multipath selects")
	r, err := mustParse(t, `[small,items.#(qty>7)]|@flatten`).Get(payload)
	require.NoError(t, err)
	require.Equal(t, `[{"sku":"S","qty":1},{"sku":"SKU-0008","qty":8}]`, r.Raw)
	require.Empty(t, keypath.Spans(payload, r), "places in the multipath's array are not places in the payload")
}

func TestSpansLocateValuesInThePayload(t *testing.T) {
	t.Parallel()
	payload := []byte(`{"IDOC":{"E1EDK01":{"BELNR":"4500012345"},"items":[{"sku":"A-1"},{"sku":"B-2"}]}}`)
	text := func(path string) []string {
		r, err := mustParse(t, path).Get(payload)
		require.NoError(t, err)
		var got []string
		for _, s := range keypath.Spans(payload, r) {
			got = append(got, string(payload[s.Start:s.End]))
		}
		return got
	}
	require.Equal(t, []string{`"4500012345"`}, text("*.E1EDK01.BELNR"))
	require.Equal(t, []string{`"A-1"`, `"B-2"`}, text("IDOC.items.#.sku"))
	require.Equal(t, []string{`{"sku":"B-2"}`}, text(`IDOC.items.#(sku=="B-2")`))
	require.Empty(t, text("IDOC.items|@flatten"), "a computed value has no place in the payload")
	require.Empty(t, text("IDOC.nope"))
}
