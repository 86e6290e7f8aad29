package canon_test

import (
	"crypto/sha256"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/lefia/edihub/internal/canon"
)

func TestJSONCanonicalForm(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		in   string
		want string
	}{
		{"whitespace removed", " { \"a\" : [ 1 , 2 ] }\n", `{"a":[1,2]}`},
		{"keys sorted", `{"b":1,"a":2,"aa":3,"A":4}`, `{"A":4,"a":2,"aa":3,"b":1}`},
		{"nested keys sorted", `{"z":{"y":1,"x":[{"d":1,"c":2}]}}`, `{"z":{"x":[{"c":2,"d":1}],"y":1}}`},
		// RFC 8785 section 3.2.3: member names sort by their UTF-16 code
		// units, so U+1F600 (surrogates D83D DE00) sorts before U+FB33 even
		// though its code point is larger, and after U+20AC.
		{
			"RFC 8785 3.2.3 sort by UTF-16 code units",
			`{"\u20ac":"Euro Sign","\r":"Carriage Return","\ufb33":"Hebrew Letter Dalet With Dagesh","1":"One",` +
				`"\ud83d\ude00":"Emoji: Grinning Face","\u0080":"Control","\u00f6":"Latin Small Letter O With Diaeresis"}`,
			"{\"\\r\":\"Carriage Return\",\"1\":\"One\",\"\u0080\":\"Control\",\"\u00f6\":\"Latin Small Letter O With Diaeresis\"," +
				"\"\u20ac\":\"Euro Sign\",\"\U0001F600\":\"Emoji: Grinning Face\",\"\ufb33\":\"Hebrew Letter Dalet With Dagesh\"}",
		},
		{"euro before emoji", `{"\ud83d\ude00":2,"\u20ac":1}`, "{\"\u20ac\":1,\"\U0001F600\":2}"},
		{"integer", `6149`, `6149`},
		{"trailing zero fraction", `6149.0`, `6149`},
		{"exponent", `1e3`, `1000`},
		{"negative zero", `-0`, `0`},
		{"negative zero fraction", `-0.0e5`, `0`},
		{"large exponent", `1e21`, `1e+21`},
		{"below 1e21", `1e20`, `100000000000000000000`},
		{"small fraction", `0.000001`, `0.000001`},
		{"tiny", `1E-7`, `1e-7`},
		{"beyond float64 precision", `12345678901234567890`, `12345678901234567000`},
		{"RFC 8785 number sample", `[333333333.33333329, 1E30, 4.50, 2e-3, 0.000000000000000000000000001]`,
			`[333333333.3333333,1e+30,4.5,0.002,1e-27]`},
		{"literals", `[true,false,null]`, `[true,false,null]`},
		{"top-level string", ` "x" `, `"x"`},
		{"html and separators unescaped", `"\u003c\u003e\u0026\u2028\u2029"`, "\"<>&\u2028\u2029\""},
		{"solidus unescaped", `"a\/b"`, `"a/b"`},
		{"short escapes", `"\u0008\u0009\u000A\u000C\u000D"`, `"\b\t\n\f\r"`},
		{"other controls lowercase hex", `"\u001F\u0000"`, `"\u001f\u0000"`},
		{"DEL literal", `"\u007f"`, "\"\x7f\""},
		{"non-ASCII kept as UTF-8", `"M\u00fcller"`, `"Müller"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, err := canon.JSON([]byte(tt.in))
			require.NoError(t, err)
			require.Equal(t, tt.want, string(got))
		})
	}
}

// TestJSONRejectsNonIJSON pins the decision documented in the package
// comment: input that RFC 8785 cannot canonicalise is an error, never a
// silently chosen interpretation.
func TestJSONRejectsNonIJSON(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		in   []byte
	}{
		{"duplicate key", []byte(`{"a":1,"a":2}`)},
		{"duplicate key with same value", []byte(`{"a":1,"a":1}`)},
		{"duplicate key after unescaping", []byte(`{"a":1,"\u0061":2}`)},
		{"duplicate key nested", []byte(`{"x":[{"k":1,"j":0,"k":1}]}`)},
		{"invalid UTF-8 byte", []byte("\"\xff\"")},
		{"truncated UTF-8 sequence", []byte("\"\xc3\"")},
		{"UTF-8 encoded surrogate", []byte("\"\xed\xa0\x80\"")},
		{"overlong UTF-8", []byte("\"\xc0\xaf\"")},
		{"lone high surrogate", []byte(`"\ud800"`)},
		{"lone high surrogate before text", []byte(`"\ud800abcdef"`)},
		{"lone low surrogate", []byte(`"\udc00"`)},
		{"high surrogate with non-low pair", []byte(`"\ud800\u0041"`)},
		{"number out of range", []byte(`1e400`)},
		{"leading zero", []byte(`01`)},
		{"trailing content", []byte(`{} {}`)},
		{"bare word", []byte(`nan`)},
		{"empty", []byte{}},
		{"nil", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, err := canon.JSON(tt.in)
			require.Error(t, err)
			require.ErrorContains(t, err, "canonicalise JSON")
			_, err = canon.ContentHash(tt.in)
			require.Error(t, err)
		})
	}
}

func TestContentHash(t *testing.T) {
	t.Parallel()
	a := []byte(`{"E1EDK01":{"BELNR":"4500012345","CURCY":"BRL"},"items":[1.0,2]}`)
	b := []byte("{\n  \"items\" : [ 1, 2e0 ],\n  \"E1EDK01\" : { \"CURCY\":\"BRL\", \"BELNR\":\"4500012345\" }\n}\n")
	changed := []byte(`{"E1EDK01":{"BELNR":"4500012345","CURCY":"EUR"},"items":[1,2]}`)

	ha, err := canon.ContentHash(a)
	require.NoError(t, err)
	hb, err := canon.ContentHash(b)
	require.NoError(t, err)
	hc, err := canon.ContentHash(changed)
	require.NoError(t, err)

	require.Equal(t, ha, hb, "order, whitespace and number spelling must not matter")
	require.NotEqual(t, ha, hc, "a changed value must change the hash")
	require.Equal(t, sha256.Sum256([]byte(`{"E1EDK01":{"BELNR":"4500012345","CURCY":"BRL"},"items":[1,2]}`)), ha)
}

// Unquote reads strings as the payload's are read: a surrogate pair is its
// character, and a lone or reversed surrogate escape is refused rather than
// read as U+FFFD.
func TestUnquote(t *testing.T) {
	t.Parallel()
	text, err := canon.Unquote(`"4711\ud83d\ude00\u00e9"`)
	require.NoError(t, err)
	require.Equal(t, "4711😀é", text)
	for _, raw := range []string{`"\ud800"`, `"a\udbffb"`, `"\ude00\ud83d"`, "\"\xff\""} {
		_, err := canon.Unquote(raw)
		require.Error(t, err, raw)
	}
}
