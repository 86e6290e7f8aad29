package canon_test

import (
	"crypto/sha256"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/lefia/edihub/internal/canon"
)

// TestRequestHashMatchesJCS proves that the array RequestHash assembles by
// hand is byte for byte the one JCS produces from the same array written
// loosely, escapes and all.
func TestRequestHashMatchesJCS(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name        string
		messageType string
		docnum      string
		payload     string
		loose       string // the same array, written with whitespace and other escapes
	}{
		{
			"plain", "ORDERS", "0000000000900101", `{"b":1,"a":[1.0,"x"]}`,
			`[ "ORDERS", "0000000000900101", { "a": [ 1, "x" ], "b": 1 } ]`,
		},
		{"no docnum becomes null", "ORDERS", "", `{}`, `["ORDERS" , null , {}]`},
		{"scalar payload", "X", "1", `42.0`, `["X","1",42]`},
		{
			"unicode", "Müller-Bestellung", "\u20ac\U0001F600", `{"name":"Müller 😀"}`,
			`["M\u00fcller-Bestellung", "\u20ac\ud83d\ude00", {"name": "M\u00FCller \uD83D\uDE00"}]`,
		},
		{
			"control characters", "tab\there", "nul\x00\x1f\x7f", `"\u0008\f\n\r"`,
			`["tab\u0009here", "nul\u0000\u001F\u007f", "\b\u000c\u000a\u000d"]`,
		},
		{
			"quotes and backslashes", `say "hi" \ bye`, `a\b`, `["\"","\\"]`,
			`["say \u0022hi\u0022 \u005c bye", "a\\b", ["\"", "\\"]]`,
		},
		{
			"html characters and separators stay literal", "<a&b>", "\u2028\u2029", `"</script>"`,
			`["\u003ca\u0026b\u003e", "\u2028\u2029", "<\/script>"]`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			payload, err := canon.JSON([]byte(tt.payload))
			require.NoError(t, err)
			want, err := canon.JSON([]byte(tt.loose))
			require.NoError(t, err)
			require.Equal(t, sha256.Sum256(want), canon.RequestHash(tt.messageType, tt.docnum, payload))
		})
	}
}

func TestRequestHashDistinguishesFields(t *testing.T) {
	t.Parallel()
	payload := []byte(`{"a":1}`)
	base := canon.RequestHash("ORDERS", "1", payload)
	require.NotEqual(t, base, canon.RequestHash("ORDCHG", "1", payload))
	require.NotEqual(t, base, canon.RequestHash("ORDERS", "2", payload))
	require.NotEqual(t, base, canon.RequestHash("ORDERS", "1", []byte(`{"a":2}`)))
	// An empty docnum is null, which must differ from any string docnum,
	// the literal text "null" included.
	require.NotEqual(t, canon.RequestHash("ORDERS", "", payload), canon.RequestHash("ORDERS", "null", payload))
}

func TestAppendString(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		prefix string
		in     string
		want   string
	}{
		{"empty", "", "", `""`},
		{"plain", "", "4500012345", `"4500012345"`},
		{"appends to dst", "x=", "y", `x="y"`},
		{"short escapes", "", "\b\t\n\f\r", `"\b\t\n\f\r"`},
		{"other controls", "", "\x00\x01\x1f", `"\u0000\u0001\u001f"`},
		{"quote and backslash", "", `"\`, `"\"\\"`},
		{"not escaped", "", "<>&/\x7f\u2028\u2029", "\"<>&/\x7f\u2028\u2029\""},
		{"unicode", "", "Müller 😀", `"Müller 😀"`},
		{"invalid UTF-8 replaced", "", "a\xffb\xed\xa0\x80", "\"a\ufffdb\ufffd\ufffd\ufffd\""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got := string(canon.AppendString([]byte(tt.prefix), tt.in))
			require.Equal(t, tt.want, got)
			// Whatever AppendString writes is already canonical.
			literal := got[len(tt.prefix):]
			again, err := canon.JSON([]byte(literal))
			require.NoError(t, err)
			require.Equal(t, literal, string(again))
		})
	}
}
