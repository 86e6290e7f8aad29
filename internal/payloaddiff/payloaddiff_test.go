package payloaddiff_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/lefia/edihub/internal/payloaddiff"
)

func readSample(t *testing.T, name string) []byte {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join("testdata", name))
	require.NoError(t, err)
	return raw
}

// The sample repeat output with changed content differs from the order in
// its control record (new DOCNUM, creation date, time and serial), in the
// second E1EDK03 date (IDDAT 011), in one more item, and in the total. The list is read off
// the two files; the diff must name exactly these paths, nothing more.
func TestCompareNamesExactlyTheChangedPathsOfTheSample(t *testing.T) {
	t.Parallel()
	changes, err := payloaddiff.Compare(readSample(t, "orders05.json"), readSample(t, "orders05_changed_content_same_belnr.json"))
	require.NoError(t, err)

	const item = `{"@SEGMENT":"1","ACTION":"001","E1EDP19":{"@SEGMENT":"1","IDTNR":"MAT-0004","QUALF":"001"},` +
		`"MENEE":"PCE","MENGE":"48.000","NETWR":"955.20","POSEX":"00040","VPREI":"19.90","WERKS":"2100"}`
	require.Equal(t, []payloaddiff.Change{
		{Kind: payloaddiff.Changed, Path: "/ORDERS05/IDOC/E1EDK03/1/DATUM", Old: `"20260310"`, New: `"20260311"`},
		{Kind: payloaddiff.Added, Path: "/ORDERS05/IDOC/E1EDP01/3", New: item},
		{Kind: payloaddiff.Changed, Path: "/ORDERS05/IDOC/E1EDS01/SUMME", Old: `"1432.80"`, New: `"2388.00"`},
		{Kind: payloaddiff.Changed, Path: "/ORDERS05/IDOC/EDI_DC40/CREDAT", Old: `"20260310"`, New: `"20260311"`},
		{Kind: payloaddiff.Changed, Path: "/ORDERS05/IDOC/EDI_DC40/CRETIM", Old: `"101501"`, New: `"090000"`},
		{Kind: payloaddiff.Changed, Path: "/ORDERS05/IDOC/EDI_DC40/DOCNUM", Old: `"0000000000900101"`, New: `"0000000000900178"`},
		{Kind: payloaddiff.Changed, Path: "/ORDERS05/IDOC/EDI_DC40/SERIAL", Old: `"20260310101501"`, New: `"20260311090000"`},
	}, changes)

	// The other way round, the item is removed and the values swap.
	back, err := payloaddiff.Compare(readSample(t, "orders05_changed_content_same_belnr.json"), readSample(t, "orders05.json"))
	require.NoError(t, err)
	require.Len(t, back, len(changes))
	require.Equal(t, payloaddiff.Change{Kind: payloaddiff.Removed, Path: "/ORDERS05/IDOC/E1EDP01/3", Old: item}, back[1])
	require.Equal(t, payloaddiff.Change{Kind: payloaddiff.Changed, Path: "/ORDERS05/IDOC/E1EDS01/SUMME", Old: `"2388.00"`, New: `"1432.80"`}, back[2])
}

// A converter that wrote a segment as a one-item array changed its shape,
// not its content: one shape change, and nothing else.
func TestCompareReportsAShapeOnlyDifferenceAsSuch(t *testing.T) {
	t.Parallel()
	changes, err := payloaddiff.Compare(readSample(t, "orders05.json"), readSample(t, "orders05_e1edk02_as_array.json"))
	require.NoError(t, err)
	require.Equal(t, []payloaddiff.Change{
		{Kind: payloaddiff.Shape, Path: "/ORDERS05/IDOC/E1EDK02", Old: "{…}", New: "[{…}]"},
	}, changes)
	require.True(t, payloaddiff.ShapeOnly(changes))

	// The other way round, the array was the original's.
	back, err := payloaddiff.Compare(readSample(t, "orders05_e1edk02_as_array.json"), readSample(t, "orders05.json"))
	require.NoError(t, err)
	require.Equal(t, []payloaddiff.Change{
		{Kind: payloaddiff.Shape, Path: "/ORDERS05/IDOC/E1EDK02", Old: "[{…}]", New: "{…}"},
	}, back)
}

// Inside a reshaped segment, values are compared as usual, at the paths of
// the array's side; changes elsewhere are listed beside the shape change.
func TestCompareLooksInsideAReshapedSegment(t *testing.T) {
	t.Parallel()
	changes, err := payloaddiff.Compare(readSample(t, "orders05_changed_content_same_belnr.json"), readSample(t, "orders05_e1edk02_as_array.json"))
	require.NoError(t, err)
	require.Contains(t, changes, payloaddiff.Change{Kind: payloaddiff.Shape, Path: "/ORDERS05/IDOC/E1EDK02", Old: "{…}", New: "[{…}]"})
	require.Contains(t, changes, payloaddiff.Change{Kind: payloaddiff.Changed, Path: "/ORDERS05/IDOC/E1EDS01/SUMME", Old: `"2388.00"`, New: `"1432.80"`})
	require.Len(t, changes, 8, "the seven changes of the changed sample and the shape change")
	require.False(t, payloaddiff.ShapeOnly(changes))

	changes, err = payloaddiff.Compare([]byte(`{"S":{"Q":"1","R":"x"}}`), []byte(`{"S":[{"Q":"2","R":"x"}]}`))
	require.NoError(t, err)
	require.Equal(t, []payloaddiff.Change{
		{Kind: payloaddiff.Shape, Path: "/S", Old: "{…}", New: "[{…}]"},
		{Kind: payloaddiff.Changed, Path: "/S/0/Q", Old: `"1"`, New: `"2"`},
	}, changes)
}

// Only a one-item array of an object is a shape: other arrays against an
// object are a changed value, as is a one-item array of a string.
func TestCompareKeepsOtherTypeChanges(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ a, b string }{
		{`{"S":{"Q":1}}`, `{"S":[{"Q":1},{"Q":1}]}`},
		{`{"S":"1"}`, `{"S":["1"]}`},
		{`{"S":{"Q":1}}`, `{"S":[[{"Q":1}]]}`},
		{`{"S":{}}`, `{"S":[]}`},
	} {
		changes, err := payloaddiff.Compare([]byte(tc.a), []byte(tc.b))
		require.NoError(t, err)
		require.Len(t, changes, 1, tc.b)
		require.Equal(t, payloaddiff.Changed, changes[0].Kind, tc.b)
		require.False(t, payloaddiff.ShapeOnly(changes))
	}
	require.False(t, payloaddiff.ShapeOnly(nil), "no change is not a shape change")
}

func TestCompare(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		a, b string
		want []payloaddiff.Change
	}{
		{name: "same content, other order and spacing", a: `{"a": 1, "b": [1, 2]}`, b: `{"b":[1,2],"a":1}`},
		{name: "numbers compare as their canonical form", a: `{"n": 1.0, "e": 1e2}`, b: `{"n": 1, "e": 100}`},
		{
			name: "member added and removed", a: `{"keep": true, "old": null}`, b: `{"keep": true, "new": "x"}`,
			want: []payloaddiff.Change{
				{Kind: payloaddiff.Added, Path: "/new", New: `"x"`},
				{Kind: payloaddiff.Removed, Path: "/old", Old: "null"},
			},
		},
		{
			name: "null to a value is a change", a: `{"v": null}`, b: `{"v": 0}`,
			want: []payloaddiff.Change{{Kind: payloaddiff.Changed, Path: "/v", Old: "null", New: "0"}},
		},
		{
			name: "array items by index", a: `[1, [2, 3], 4, 5]`, b: `[1, [2, 30]]`,
			want: []payloaddiff.Change{
				{Kind: payloaddiff.Changed, Path: "/1/1", Old: "3", New: "30"},
				{Kind: payloaddiff.Removed, Path: "/2", Old: "4"},
				{Kind: payloaddiff.Removed, Path: "/3", Old: "5"},
			},
		},
		{
			name: "pointer tokens escape ~ and /", a: `{"a/b": {"c~d": 1}}`, b: `{"a/b": {"c~d": 2}}`,
			want: []payloaddiff.Change{{Kind: payloaddiff.Changed, Path: "/a~1b/c~0d", Old: "1", New: "2"}},
		},
		{
			name: "the whole document", a: `"text"`, b: `{"a": "<b>&</b>"}`,
			want: []payloaddiff.Change{{Kind: payloaddiff.Changed, Path: "", Old: `"text"`, New: `{"a":"<b>&</b>"}`}},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			changes, err := payloaddiff.Compare([]byte(tc.a), []byte(tc.b))
			require.NoError(t, err)
			require.Equal(t, tc.want, changes)
		})
	}
}

// Payloads that are not I-JSON have no canonical form to compare; ingest
// refuses them, so a stored payload never is one.
func TestCompareRefusesWhatIsNotIJSON(t *testing.T) {
	t.Parallel()
	_, err := payloaddiff.Compare([]byte(`{"a": 1, "a": 2}`), []byte(`{}`))
	require.ErrorContains(t, err, "first payload")
	_, err = payloaddiff.Compare([]byte(`{}`), []byte(`{"a": `))
	require.ErrorContains(t, err, "second payload")
}
