package fingerprint_test

import (
	"crypto/sha256"
	"encoding/hex"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/lefia/edihub/internal/fingerprint"
	"github.com/lefia/edihub/internal/keypath"
)

// hexOf is the expected fingerprint of a canonical array written out by hand
// in a test. Hashing the literal text keeps the expectation independent of
// the code under test.
func hexOf(canonicalArray string) string {
	sum := sha256.Sum256([]byte(canonicalArray))
	return hex.EncodeToString(sum[:])
}

func TestComputeVectors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		id       int64
		payload  string
		paths    []string
		docnum   string
		want     string // the canonical array, or "" for no fingerprint
		fallback fingerprint.Fallback
	}{
		{name: "string keeps leading zeros", payload: `{"a":"0000000064132944"}`, paths: []string{"a"},
			want: `["42","0000000064132944"]`},
		{name: "missing path is null", payload: `{"a":"0000000064132944"}`, paths: []string{"a", "b"},
			want: `["42","0000000064132944",null]`},
		{name: "message type id is a decimal string", id: 7, payload: `{"a":"x"}`, paths: []string{"a"},
			want: `["7","x"]`},
		{name: "integer", payload: `{"n":6149}`, paths: []string{"n"}, want: `["42","6149"]`},
		{name: "integer as string matches integer", payload: `{"n":"6149"}`, paths: []string{"n"}, want: `["42","6149"]`},
		{name: "float with zero fraction", payload: `{"n":6149.0}`, paths: []string{"n"}, want: `["42","6149"]`},
		{name: "float", payload: `{"n":-12.50}`, paths: []string{"n"}, want: `["42","-12.5"]`},
		{name: "exponent", payload: `{"n":1e3}`, paths: []string{"n"}, want: `["42","1000"]`},
		{name: "small exponent", payload: `{"n":1.5E-7}`, paths: []string{"n"}, want: `["42","1.5e-7"]`},
		{name: "large exponent", payload: `{"n":1e21}`, paths: []string{"n"}, want: `["42","1e+21"]`},
		{name: "negative zero", payload: `{"n":-0}`, paths: []string{"n"}, want: `["42","0"]`},
		{name: "booleans", payload: `{"t":true,"f":false}`, paths: []string{"t", "f"}, want: `["42","true","false"]`},
		{name: "nested object canonicalised", payload: `{"o":{ "b" : [1, {"y":2,"x":1.0}], "a":"z" }}`, paths: []string{"o"},
			want: `["42",{"a":"z","b":[1,{"x":1,"y":2}]}]`},
		{name: "array keeps order and JSON types", payload: `{"arr":[3,"1",null,1.0,true]}`, paths: []string{"arr"},
			want: `["42",[3,"1",null,1,true]]`},
		{name: "null is null", payload: `{"a":null,"b":"x"}`, paths: []string{"a", "b"}, want: `["42",null,"x"]`},
		{name: "empty string is null", payload: `{"a":"","b":"x"}`, paths: []string{"a", "b"}, want: `["42",null,"x"]`},
		{name: "blank string is kept", payload: `{"a":" "}`, paths: []string{"a"}, want: `["42"," "]`},
		{name: "unicode", payload: `{"a":"Müller"}`, paths: []string{"a"}, want: `["42","Müller"]`},
		{name: "unicode escape decoded", payload: `{"a":"M\u00fcller"}`, paths: []string{"a"}, want: `["42","Müller"]`},
		{name: "emoji from surrogate pair", payload: `{"a":"\ud83d\ude00 ok"}`, paths: []string{"a"}, want: `["42","😀 ok"]`},
		{name: "tab escaped", payload: `{"a":"A\u0009B"}`, paths: []string{"a"}, want: `["42","A\tB"]`},
		{name: "control character escaped lowercase", payload: `{"a":"\u001F"}`, paths: []string{"a"}, want: `["42","\u001f"]`},
		{name: "quote and backslash", payload: `{"a":"\"\\"}`, paths: []string{"a"}, want: `["42","\"\\"]`},
		{name: "html and separators literal", payload: `{"a":"\u003c\u0026\u003e\u2028"}`, paths: []string{"a"},
			want: "[\"42\",\"<&>\u2028\"]"},
		{name: "wildcard path", payload: `{"ORDERS05":{"IDOC":{"E1EDK01":{"BELNR":"4500012345"}}}}`,
			paths: []string{"*.IDOC.E1EDK01.BELNR"}, want: `["42","4500012345"]`},
		{name: "query path", payload: `{"k":[{"q":"009","v":"a"},{"q":"001","v":"b"}]}`,
			paths: []string{`k.#(q=="001").v`}, want: `["42","b"]`},
		{name: "path yielding an array", payload: `{"k":[{"v":"1"},{"v":2.0}]}`, paths: []string{"k.#.v"},
			want: `["42",["1",2]]`},
		{name: "docnum ignored when a path has a value", payload: `{"a":"x"}`, paths: []string{"a"}, docnum: "0000000000900101",
			want: `["42","x"]`},
		{name: "no paths uses docnum", payload: `{"a":"x"}`, docnum: "0000000000900101",
			want: `["42","0000000000900101"]`, fallback: fingerprint.FallbackNoPaths},
		{name: "docnum is escaped like any string", payload: `{}`, docnum: "DOC\t1",
			want: `["42","DOC\t1"]`, fallback: fingerprint.FallbackNoPaths},
		{name: "all values null uses docnum", payload: `{"a":null,"b":""}`, paths: []string{"a", "b", "c"}, docnum: "900101",
			want: `["42","900101"]`, fallback: fingerprint.FallbackAllMissing},
		{name: "all values null and no docnum", payload: `{"a":null}`, paths: []string{"a", "b"},
			fallback: fingerprint.FallbackNoDocnum},
		{name: "no paths and no docnum", payload: `{"a":"x"}`, fallback: fingerprint.FallbackNoDocnum},

		// Values that carry no business identity are null, like a missing
		// path (SPEC.md, Mode 2); with every path so, the docnum decides.
		{name: "fan-out matching nothing is null", payload: `{"items":[{"qty":1},{"qty":2}]}`, paths: []string{"items.#.sku"},
			docnum: "900101", want: `["42","900101"]`, fallback: fingerprint.FallbackAllMissing},
		{name: "fan-out over no elements is null", payload: `{"items":[]}`, paths: []string{"items.#.sku"},
			docnum: "900101", want: `["42","900101"]`, fallback: fingerprint.FallbackAllMissing},
		{name: "multipath matching nothing is null", payload: `{"x":1}`, paths: []string{"[a,b]"},
			docnum: "900101", want: `["42","900101"]`, fallback: fingerprint.FallbackAllMissing},
		{name: "multipath then query matching nothing is null", payload: `{"ORDERS05":{"IDOC":{"E1EDK02":{"QUALF":"001","BELNR":"1"}}}}`,
			paths: []string{`[*.IDOC.E1EDK02]|@flatten|#(QUALF=="009")#.BELNR`}, docnum: "900101",
			want: `["42","900101"]`, fallback: fingerprint.FallbackAllMissing},
		{name: "empty array is null", payload: `{"a":[]}`, paths: []string{"a"}, docnum: "900101",
			want: `["42","900101"]`, fallback: fingerprint.FallbackAllMissing},
		{name: "empty object is null", payload: `{"o":{}}`, paths: []string{"o"}, docnum: "900101",
			want: `["42","900101"]`, fallback: fingerprint.FallbackAllMissing},
		{name: "array of only nulls and empty strings is null", payload: `{"a":[null,"",null]}`, paths: []string{"a"}, docnum: "900101",
			want: `["42","900101"]`, fallback: fingerprint.FallbackAllMissing},
		{name: "nested empties are null", payload: `{"o":{"a":[],"b":{"c":null},"d":[[""]]}}`, paths: []string{"o"}, docnum: "900101",
			want: `["42","900101"]`, fallback: fingerprint.FallbackAllMissing},
		{name: "empty values and no docnum give no fingerprint", payload: `{"items":[]}`, paths: []string{"items.#.sku", "[a,b]"},
			fallback: fingerprint.FallbackNoDocnum},
		{name: "empty value beside a value is null", payload: `{"a":"x","items":[{}]}`, paths: []string{"a", "items.#.sku"},
			docnum: "900101", want: `["42","x",null]`},
		{name: "array with one value keeps its nulls", payload: `{"a":[null,"1",""]}`, paths: []string{"a"},
			want: `["42",[null,"1",""]]`},
		{name: "object with one value is kept whole", payload: `{"o":{"a":null,"b":0}}`, paths: []string{"o"},
			want: `["42",{"a":null,"b":0}]`},
		{name: "zero is a value", payload: `{"n":0}`, paths: []string{"n"}, docnum: "900101", want: `["42","0"]`},
		{name: "false is a value", payload: `{"f":false}`, paths: []string{"f"}, docnum: "900101", want: `["42","false"]`},
		{name: "array of false is a value", payload: `{"a":[false]}`, paths: []string{"a"}, want: `["42",[false]]`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			id := tt.id
			if id == 0 {
				id = 42
			}
			got, err := fingerprint.Compute(fingerprint.Input{
				MessageTypeID: id, Paths: tt.paths, Docnum: tt.docnum, Payload: []byte(tt.payload),
			})
			require.NoError(t, err)
			require.Equal(t, tt.fallback, got.Fallback)
			require.Len(t, got.Values, len(tt.paths))
			if tt.want == "" {
				require.Empty(t, got.Fingerprint)
				return
			}
			require.Equal(t, hexOf(tt.want), got.Fingerprint, "array %s", tt.want)
		})
	}
}

func TestComputeValues(t *testing.T) {
	t.Parallel()
	got, err := fingerprint.Compute(fingerprint.Input{
		MessageTypeID: 42,
		Paths:         []string{"s", "n", "o", "gone", "nul", "empty", "items.#.sku", "none"},
		Payload:       []byte(`{"s":"007","n":1.50,"o":{"b":1,"a":2},"nul":null,"empty":"","items":[{"q":1}],"none":[null,{}]}`),
	})
	require.NoError(t, err)
	require.Equal(t, []fingerprint.Value{
		{Path: "s", JSON: `"007"`, Spans: []keypath.Span{{Start: 5, End: 10}}},
		{Path: "n", JSON: `"1.5"`, Spans: []keypath.Span{{Start: 15, End: 19}}},
		{Path: "o", JSON: `{"a":2,"b":1}`, Spans: []keypath.Span{{Start: 24, End: 37}}},
		{Path: "gone", JSON: "null", Missing: true},
		{Path: "nul", JSON: "null", Missing: true},
		{Path: "empty", JSON: "null", Missing: true, Found: `""`},
		{Path: "items.#.sku", JSON: "null", Missing: true, Found: `[]`},
		{Path: "none", JSON: "null", Missing: true, Found: `[null,{}]`},
	}, got.Values)
	require.Equal(t, fingerprint.FallbackNone, got.Fallback)
	require.Equal(t, hexOf(`["42","007","1.5",{"a":2,"b":1},null,null,null,null,null]`), got.Fingerprint)
}

// TestComputeIgnoresKeyOrderAndWhitespace proves that the same object sent
// with its members in another order and other whitespace, inside a payload
// that is itself reordered, gives the identical fingerprint.
func TestComputeIgnoresKeyOrderAndWhitespace(t *testing.T) {
	t.Parallel()
	a := []byte(`{"hdr":{"BELNR":"4500012345","party":{"id":"2000","role":"AG"},"qty":12.0},"x":1}`)
	b := []byte("{\n \"x\" : 1,\n \"hdr\" : {\n  \"qty\" : 1.2e1,\n  \"party\" : { \"role\" : \"AG\", \"id\" : \"2000\" },\n  \"BELNR\" : \"4500012345\"\n }\n}")
	paths := []string{"hdr", "hdr.BELNR", "hdr.qty"}

	fa, err := fingerprint.Compute(fingerprint.Input{MessageTypeID: 42, Paths: paths, Payload: a})
	require.NoError(t, err)
	fb, err := fingerprint.Compute(fingerprint.Input{MessageTypeID: 42, Paths: paths, Payload: b})
	require.NoError(t, err)

	require.Equal(t, fa.Fingerprint, fb.Fingerprint)
	for i := range fa.Values {
		require.Equal(t, fa.Values[i].JSON, fb.Values[i].JSON)
	}
	require.Equal(t, hexOf(`["42",{"BELNR":"4500012345","party":{"id":"2000","role":"AG"},"qty":12},"4500012345","12"]`), fa.Fingerprint)
}

func TestComputeErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		payload string
		path    string
	}{
		{"number out of range", `{"n":1e400}`, "n"},
		{"selected object with duplicate keys", `{"o":{"a":1,"a":2}}`, "o"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, err := fingerprint.Compute(fingerprint.Input{MessageTypeID: 42, Paths: []string{tt.path}, Payload: []byte(tt.payload)})
			require.ErrorContains(t, err, `fingerprint path "`+tt.path+`"`)
		})
	}

	// A value that is not selected is never canonicalised, so it cannot
	// cause an error.
	got, err := fingerprint.Compute(fingerprint.Input{MessageTypeID: 42, Paths: []string{"a"}, Payload: []byte(`{"a":"x","n":1e400,"o":{"k":1,"k":2}}`)})
	require.NoError(t, err)
	require.Equal(t, hexOf(`["42","x"]`), got.Fingerprint)
}
