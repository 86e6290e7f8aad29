package keypath_test

import (
	"fmt"
	"runtime"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/tidwall/gjson"

	"github.com/lefia/edihub/internal/keypath"
)

// pathGen writes a path from fuzz bytes, reaching every construct of the
// grammar and the gjson syntax just outside it (other modifiers, deeper
// nesting, more stages), so that both sides of every rule are exercised.
type pathGen struct {
	in []byte
	b  strings.Builder
}

func (g *pathGen) next(n int) int {
	if len(g.in) == 0 {
		return 0
	}
	v := int(g.in[0]) % n
	g.in = g.in[1:]
	return v
}

var (
	genKeys   = []string{"a", "b", "id", "items", "sku", "qty", "*", "?", "i*", "@SEGMENT", `a\.b`, "0", "1", "k?y"}
	genValues = []string{`"x"`, `"SKU-1*"`, `"*a*b"`, "1", "5", "true", "null", `""`}
	genOps    = []string{"==", "!=", "<", "<=", ">", ">=", "%", "!%"}
	genMods   = []string{"@flatten", "@this", "@reverse", "@pretty", "@ugly", "@keys"}
)

func (g *pathGen) path() string {
	stages := 1 + g.next(5)
	if g.next(3) == 0 {
		g.b.WriteByte('[')
		for i := range 1 + g.next(5) {
			if i > 0 {
				g.b.WriteByte(',')
			}
			g.chain(0)
		}
		g.b.WriteByte(']')
		stages--
	}
	for i := range stages {
		if i > 0 || g.b.Len() > 0 {
			g.b.WriteByte('|')
		}
		if g.next(4) == 0 {
			g.b.WriteString(genMods[g.next(len(genMods))])
		} else {
			g.chain(0)
		}
	}
	return g.b.String()
}

func (g *pathGen) chain(depth int) {
	for i := range 1 + g.next(4) {
		if i > 0 {
			g.b.WriteByte('.')
		}
		switch g.next(6) {
		case 0:
			g.b.WriteByte('#')
			if g.next(2) == 0 {
				g.b.WriteString(".")
				g.b.WriteString(genKeys[g.next(len(genKeys))])
			}
		case 1:
			g.b.WriteString("#(")
			if depth < 3 && g.next(2) == 0 {
				g.chain(depth + 1)
			}
			if g.next(4) != 0 {
				g.b.WriteString(genOps[g.next(len(genOps))])
				g.b.WriteString(genValues[g.next(len(genValues))])
			}
			g.b.WriteByte(')')
			if g.next(2) == 0 {
				g.b.WriteByte('#')
			}
		default:
			g.b.WriteString(genKeys[g.next(len(genKeys))])
		}
	}
}

// fuzzPayload builds a valid payload of about 4 KiB from fuzz bytes: an
// object whose "items" repeat one generated element, so that fan-outs,
// queries and multipaths have much to select.
func fuzzPayload(in []byte) []byte {
	el := fmt.Sprintf(`{"sku":"SKU-%d","qty":%d,"a":{"b":[%d,{"id":"x"}],"?":null},"@SEGMENT":"1","items":[{"qty":1},[2,3]]}`,
		len(in), len(in)%7, len(in)%3)
	var b strings.Builder
	b.WriteString(`{"id":"ORDER","a":{"b":"c"},"items":[`)
	for i := 0; b.Len() < 4<<10; i++ {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(el)
	}
	b.WriteString(`]}`)
	return []byte(b.String())
}

// FuzzPathBound generates paths from the grammar and from raw bytes. Parse
// must never panic; for every path it accepts, evaluation must stay within
// the bounds the grammar promises: the bytes allocated while evaluating, a
// deterministic measure of the work that grows with every copy a multipath,
// fan-out or modifier makes, stay within Cost reads of the payload, and the
// value is within MaxValueBytes and the one gjson yields. Wall time is
// never measured.
func FuzzPathBound(f *testing.F) {
	for _, seed := range []string{
		`[*.IDOC.E1EDK02]|@flatten|#(QUALF=="009").BELNR`,
		strings.Repeat("[@this,@this,@this,@this]|", 13) + "id",
		strings.Repeat("[@this,@this]|", 8) + "id",
		"@pretty|@ugly|@pretty|@ugly|id",
		`[items,items,items,items]|@flatten|#(qty>0)#.sku`,
		"items.#.a.b.#.id",
		`items.#(sku%"SKU-*")#.qty`,
	} {
		f.Add([]byte(seed), seed)
	}
	f.Fuzz(func(t *testing.T, in []byte, raw string) {
		payload := fuzzPayload(in)
		gen := &pathGen{in: in}
		for _, text := range []string{gen.path(), raw} {
			p, err := keypath.Parse(text)
			if err != nil {
				var pe *keypath.Error
				require.ErrorAs(t, err, &pe)
				require.GreaterOrEqual(t, pe.Pos, 1)
				continue
			}
			checkBound(t, p, payload)
		}
	})
}

// checkBound evaluates p on payload and checks the bounds of the grammar.
func checkBound(t *testing.T, p keypath.Path, payload []byte) {
	t.Helper()
	require.LessOrEqual(t, p.Cost(), keypath.MaxCost)
	require.LessOrEqual(t, p.Amplification(), keypath.MaxMultipath)
	n := len(payload)

	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	v, err := p.Get(payload)
	runtime.ReadMemStats(&after)

	// Every copy a multipath, a fan-out or a modifier makes is at most the
	// size of what it reads, and Cost counts the reads.
	allocated := int(after.TotalAlloc - before.TotalAlloc)
	require.LessOrEqual(t, allocated, 4*p.Cost()*(n+64)+16<<10, "bytes allocated evaluating %q", p)
	if err != nil {
		var le *keypath.LimitError
		require.ErrorAs(t, err, &le)
		return
	}
	require.LessOrEqual(t, len(v.Raw), keypath.MaxValueBytes)
	// The bounded evaluation yields what gjson itself yields for the path.
	require.Equal(t, gjson.GetBytes(payload, p.String()).Raw, v.Raw, "value of %q", p)
}
