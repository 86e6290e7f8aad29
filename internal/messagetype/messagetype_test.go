package messagetype

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestParseFields(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, text string
		want       []string
		errPart    string
	}{
		{name: "empty text", text: "", want: []string{}},
		{name: "empty array", text: "[]", want: []string{}},
		{name: "null", text: "null", want: []string{}},
		{name: "paths in order", text: `["*.IDOC.EDI_DC40.MESTYP","*.IDOC.E1EDK01.BELNR"]`,
			want: []string{"*.IDOC.EDI_DC40.MESTYP", "*.IDOC.E1EDK01.BELNR"}},
		{name: "not json", text: `E1EDK01.BELNR`, errPart: "JSON array"},
		{name: "not strings", text: `[1,2]`, errPart: "JSON array"},
		{name: "empty path", text: `["a",""]`, errPart: "path 2"},
		{name: "padded path", text: `[" a"]`, errPart: "spaces"},
		{name: "repeated path", text: `["a","a"]`, errPart: "twice"},
		{name: "too long", text: `["` + strings.Repeat("a", 600) + `"]`, errPart: "longer"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, err := ParseFields(tt.text)
			if tt.errPart != "" {
				require.ErrorContains(t, err, tt.errPart)
				return
			}
			require.NoError(t, err)
			require.Equal(t, tt.want, got)
		})
	}
}

func TestValidateWindow(t *testing.T) {
	t.Parallel()
	ptr := func(i int) *int { return &i }
	require.NoError(t, ValidateWindow(nil))
	require.NoError(t, ValidateWindow(ptr(1)))
	require.NoError(t, ValidateWindow(ptr(MaxWindowHours)))
	require.ErrorContains(t, ValidateWindow(ptr(0)), "between 1 and")
	require.ErrorContains(t, ValidateWindow(ptr(MaxWindowHours+1)), "between 1 and")
}

func TestWindowHoursDefault(t *testing.T) {
	t.Parallel()
	require.Equal(t, int32(168), WindowHours(nil))
	h := int32(2)
	require.Equal(t, int32(2), WindowHours(&h))
}

func TestValidateCode(t *testing.T) {
	t.Parallel()
	require.NoError(t, ValidateCode("ORDERS05"))
	require.NoError(t, ValidateCode("SHOP_ORDER"))
	require.Error(t, ValidateCode(""))
	require.Error(t, ValidateCode("ORDERS 05"))
	require.Error(t, ValidateCode("<script>"))
}

func TestFieldsRoundTrip(t *testing.T) {
	t.Parallel()
	fields := []string{`[*.IDOC.E1EDK02]|@flatten|#(QUALF=="001").BELNR`}
	got, err := DecodeFields(EncodeFields(fields))
	require.NoError(t, err)
	require.Equal(t, fields, got)
	require.Equal(t, "[]", string(EncodeFields(nil)))
}
