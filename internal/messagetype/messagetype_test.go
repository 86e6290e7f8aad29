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
	require.ErrorContains(t, ValidateCode("mixed"), "reserved")
	require.ErrorContains(t, ValidateCode("unknown"), "reserved")
	require.NoError(t, ValidateCode("UNKNOWN"), "codes are case-sensitive, and so are labels")
}

func TestPathProblemsReportsEachPath(t *testing.T) {
	t.Parallel()
	problems := PathProblems([]string{"a", "", "a", "b"})
	require.Len(t, problems, 4)
	require.NoError(t, problems[0])
	require.ErrorContains(t, problems[1], "path 2 of duplicate_key_fields is empty")
	require.ErrorContains(t, problems[2], `"a" appears twice`)
	require.NoError(t, problems[3])
	require.ErrorContains(t, ValidateFields([]string{"a", "", "a"}), "path 2", "ValidateFields reports the first")
	require.ErrorContains(t, ValidateFields(make([]string, MaxFields+1)), "at most 32")
}

func TestPathGrammar(t *testing.T) {
	t.Parallel()
	for _, path := range []string{
		"id",
		"*.IDOC.E1EDK01.BELNR",
		"*.IDOC.E1EDK01.@SEGMENT",
		`[*.IDOC.E1EDK02]|@flatten|#(QUALF=="009").BELNR`,
		`*.IDOC.E1EDK02.#(QUALF=="009")#.BELNR`,
		`items.#(name%"(draft*").id`, // a bracket inside a quoted string is text
		`weird\(key`,                 // an escaped bracket is part of the key name
		`ends.with\.`,                // an escaped dot too
	} {
		require.NoError(t, ValidateFields([]string{path}), path)
	}
	for path, want := range map[string]string{
		`*.IDOC.E1EDK02.#(QUALF=="009"`:     `at position 17, the '(' is not closed (rule "syntax")`,
		`*.IDOC.E1EDK01.BELNR)`:             `at position 21, ')' must be escaped in a key: write \) (rule "escapes")`,
		`*.IDOC.E1EDK01.`:                   `at position 16, a '.' must be followed by a step (rule "syntax")`,
		strings.Repeat("[@this,@this]|", 8): `at position 2, @this is not allowed: a key path may use only @flatten (rule "modifiers")`,
	} {
		err := ValidateFields([]string{path})
		require.ErrorContains(t, err, "is refused: "+want, path)
	}
}

func TestTypeCostIsBounded(t *testing.T) {
	t.Parallel()
	heavy := func(key string) string { return "[" + key + ".#.b,c]|@flatten" }
	require.NoError(t, ValidateFields([]string{heavy("a1"), heavy("a2")}))
	err := ValidateFields([]string{heavy("a1"), heavy("a2"), heavy("a3")})
	require.ErrorContains(t, err, "duplicate_key_fields is refused: at position 1, the paths together would read each payload 18 times")
	require.Equal(t, []error{nil, nil, nil}, PathProblems([]string{heavy("a1"), heavy("a2"), heavy("a3")}),
		"the cost is a problem of the list, not of one path")
}

// FuzzPathProblems checks that no text makes the path check panic: it runs
// gjson on every path, and an admin may type anything.
func FuzzPathProblems(f *testing.F) {
	for _, seed := range []string{"a.b", `[a]|@flatten|#(b=="c").d`, `#(`, `\`, `{"a":b}`, "@reverse"} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, path string) {
		require.Len(t, PathProblems([]string{path}), 1)
	})
}
