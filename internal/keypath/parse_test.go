package keypath_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/lefia/edihub/internal/keypath"
)

// The paths the presets, README.md and the demo use; each must stay valid.
var documented = []string{
	"*.IDOC.EDI_DC40.MESTYP",
	"*.IDOC.E1EDK01.BELNR",
	`[*.IDOC.E1EDK02]|@flatten|#(QUALF=="009").BELNR`,
	`[*.IDOC.E1EDK02]|@flatten|#(QUALF=="001").BELNR`,
	"source",
	"id",
	"*.IDOC.E1EDK01.@SEGMENT",
	`*.IDOC.E1EDK02.#(QUALF=="009")#.BELNR`,
	`items.#(name%"(draft*").id`,
	`weird\(key`,
	`ends.with\.`,
	`k.#(q=="001").v`,
	"k.#.v",
	"items.#",
	"items.0.sku",
	`friends.#(nets.#(=="fb"))#.first`,
	`a.#(n>=5).b`,
	`a.#(n != null)`,
	`[a.b,c.d]`,
	`[a,b,c,d]|@flatten`,
	`ns0:ORDERS05.IDOC`,
	`order id.line-no`,
}

func TestParseAcceptsDocumentedPaths(t *testing.T) {
	t.Parallel()
	for _, path := range documented {
		p, err := keypath.Parse(path)
		require.NoError(t, err, path)
		require.Equal(t, path, p.String())
		require.LessOrEqual(t, p.Cost(), keypath.MaxCost)
	}
}

func TestParseCost(t *testing.T) {
	t.Parallel()
	for path, want := range map[string]int{
		"a.b":   1,
		"a.#.b": 3,
		`[*.IDOC.E1EDK02]|@flatten|#(QUALF=="009").BELNR`: 1 + 1 + 3,
		`[a,b,c,d]|@flatten`:                              4 + 4,
		`friends.#(nets.#(=="fb"))#.first`:                1 + 2*3,
	} {
		p, err := keypath.Parse(path)
		require.NoError(t, err, path)
		require.Equal(t, want, p.Cost(), path)
	}
}

func TestParseRefuses(t *testing.T) {
	t.Parallel()
	for path, want := range map[string]string{
		strings.Repeat("[@this,@this,@this,@this]|", 13) + "a": `at position 2, @this is not allowed: a key path may use only @flatten (rule "modifiers")`,
		strings.Repeat("[@this,@this]|", 8) + "a":              `at position 2, @this is not allowed`,
		"a|@pretty|@ugly|@pretty":                              `at position 3, @pretty is not allowed`,
		"a|[b,c]":                                              `at position 3, a multipath '[…]' may only start the path (rule "multipath")`,
		"[a,b,c,d,e]":                                          `at position 10, a multipath may hold at most 4 paths (rule "multipath")`,
		"[a]|b|c|d|e":                                          `at position 11, a path may have at most 4 stages separated by '|' (rule "stages")`,
		"a.@flatten":                                           `at position 3, a modifier must be a stage of its own`,
		"a|@flatten:{\"deep\":true}":                           `at position 11, @flatten takes no arguments`,
		"a|@flatten.b":                                         `at position 11, @flatten takes no arguments and is a stage of its own`,
		"a*b*c":                                                `at position 4, a key may hold at most one '*' (rule "wildcards")`,
		"*.*.*.*.*":                                            `at position 9, a path may hold at most 4 keys with '*' or '?' (rule "wildcards")`,
		"a.#.b.#.c.#.d.#.e":                                    `at position 16, a path may fan out ('#.' or '#(…)#') at most 3 times (rule "fan-out")`,
		`a.#(b%"*x*y")`:                                        `at position 7, a '%' pattern may hold at most one '*' (rule "patterns")`,
		`a.#(b%5)`:                                             `at position 7, a '%' pattern must be a JSON string`,
		`a.#(b==x)`:                                            `at position 8, a query compares with a JSON string`,
		`a.#(b.#(c.#(d==1)))`:                                  `at position 11, a query may hold at most 1 level of queries (rule "queries")`,
		`*.IDOC.E1EDK02.#(QUALF=="009"`:                        `at position 17, the '(' is not closed`,
		`*.IDOC.E1EDK02.#(QUALF=="009).BELNR`:                  `at position 25, the quote is not closed`,
		`[*.IDOC.E1EDK02|@flatten`:                             `at position 16, '|' must be escaped in a key`,
		`*.IDOC.E1EDK01.BELNR)`:                                `at position 21, ')' must be escaped in a key: write \)`,
		`*.IDOC.E1EDK01.`:                                      `at position 16, a '.' must be followed by a step`,
		`a|`:                                                   `at position 3, the path ends with '|'`,
		`a..b`:                                                 `at position 3, a step is empty`,
		`..0`:                                                  `at position 1, a step is empty`,
		`{"po":a}`:                                             `at position 1, a multipath '[…]' may only start the path`,
		`!true`:                                                `at position 1, a key may not start with '!'`,
		`[x:a.b]`:                                              `at position 3, ':' must be escaped in a key`,
		`a#b`:                                                  `at position 2, '#' must be escaped in a key`,
		`a.#b`:                                                 `at position 4, '#' must be followed by '.', '(' or end the path`,
		`a\`:                                                   `at position 3, a '\' must be followed by the character it escapes`,
		"a\tb":                                                 `at position 2, control characters are not allowed`,
		"":                                                     `at position 1, the path is empty`,
		strings.Repeat("a", keypath.MaxLength+1):               `at position 513, the path is longer than 512 characters (rule "length")`,
		`[a,b,c,d]|@flatten|#(x==1)`:                           `at position 1, the path would read the payload 20 times; at most 8 are allowed (fewer`,
	} {
		_, err := keypath.Parse(path)
		require.ErrorContains(t, err, want, path)
		var pe *keypath.Error
		require.ErrorAs(t, err, &pe)
	}
}

func TestCheckTypeCost(t *testing.T) {
	t.Parallel()
	heavy, err := keypath.Parse(`[a.#.b,c]|@flatten`)
	require.NoError(t, err)
	require.Equal(t, 4+2, heavy.Cost())
	require.NoError(t, keypath.CheckTypeCost([]keypath.Path{heavy, heavy}))
	require.ErrorContains(t, keypath.CheckTypeCost([]keypath.Path{heavy, heavy, heavy}),
		`the paths together would read each payload 18 times; at most 16 are allowed`)
}
