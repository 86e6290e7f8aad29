package canon_test

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/gowebpki/jcs"

	"github.com/lefia/edihub/internal/canon"
)

// The canonical form is defined by github.com/gowebpki/jcs (see the package
// comment): these tests hold canon.JSON to it byte for byte, on documents
// built to reach every corner of RFC 8785 and on whatever the fuzzer finds.

// requireSameAsJCS fails unless canon.JSON and jcs.Transform both refuse raw
// or both produce the same bytes.
func requireSameAsJCS(t testing.TB, raw []byte) {
	t.Helper()
	want, wantErr := jcs.Transform(raw)
	got, err := canon.JSON(raw)
	if wantErr != nil {
		if err == nil {
			t.Fatalf("jcs refuses %q (%v), canon.JSON gives %q", truncate(raw), wantErr, truncate(got))
		}
		return
	}
	if err != nil {
		t.Fatalf("jcs accepts %q, canon.JSON refuses it: %v", truncate(raw), err)
	}
	if !bytes.Equal(want, got) {
		t.Fatalf("%q: jcs gives %q, canon.JSON %q", truncate(raw), truncate(want), truncate(got))
	}
}

func truncate(b []byte) []byte {
	if len(b) > 300 {
		return append(b[:300:300], "…"...)
	}
	return b
}

func TestJSONMatchesJCSOnEdgeCases(t *testing.T) {
	t.Parallel()
	for _, doc := range []string{
		// The one kind of document the implementations treat differently
		// on their own: numbers beyond a double, and values that look like
		// jsontext's clamped spelling of them.
		`1e400`, `-1e400`, `[1,{"a":1e309}]`, `1.7976931348623157e308`, `-1.7976931348623157e+308`,
		`1.7976931348623158e308`, `1.7976931348623159e308`, `"1.7976931348623157e+308"`,
		`{"x":"1.7976931348623157e+308","y":1e999}`,
		// Underflow is not an error: it rounds to zero or a subnormal.
		`1e-400`, `-1e-400`, `4.9e-324`, `2.4e-324`, `5e-324`,
		// Integers past 2^53, where the ECMAScript form loses digits.
		`9007199254740993`, `-9007199254740993`, `123456789012345678901234567890`, `1e21`, `1e20`, `0.1e22`,
		`[0, -0, -0.0, 0e10, 1.0, 1.5e-7, 0.000001, 1E-6, 1e+2, 100e-2]`,
		// Nesting at and past the limit of 10,000.
		strings.Repeat("[", 10000) + strings.Repeat("]", 10000),
		strings.Repeat("[", 10001) + strings.Repeat("]", 10001),
		strings.Repeat(`{"a":`, 10000) + "1" + strings.Repeat("}", 10000),
		strings.Repeat(`{"a":`, 10001) + "1" + strings.Repeat("}", 10001),
		// Whitespace, BOMs, and bytes outside strings.
		" \t\r\n{ \"a\" :\n[ 1 ,\t2 ] } \n", "\ufeff{}", "{}\x00", "\x00", "{\"a\":1}\u00a0",
		// Strings: escapes, surrogates, controls, invalid UTF-8.
		`"\u0000\u001f\u007f\u0080\u2028\u2029\ufeff\uffff"`, `"\ud83d\ude00\uD83D\uDE00"`, `"\ud800"`, `"\udc00"`,
		`"\ud800\ud800"`, `"\ud800\u0041"`, `"\ud800x"`, "\"\xed\xa0\x80\"", "\"\xf4\x90\x80\x80\"", "\"\xc0\x80\"",
		`"\/\b\f\n\r\t\"\\"`, `"\x"`, `"\u12"`, `"\U0041"`, "\"a\tb\"", "\"\x7f\"",
		// Member names: order by UTF-16 code units, and duplicates after
		// unescaping.
		`{"\ufb33":1,"\ud83d\ude00":2,"\u20ac":3,"\r":4,"1":5,"\u0080":6,"":7}`,
		`{"a":1,"\u0061":2}`, `{"":1,"":2}`, `{"aa":1,"a":2,"a\u0000":3}`, `{"\ud83d\ude00":1,"😀":2}`,
		// Malformed structure.
		`[1,]`, `{"a":1,}`, `[,1]`, `{,}`, `{"a" 1}`, `{"a":}`, `[1 2]`, `[true false]`, `tru`, `nul`, `01`, `-`,
		`1.`, `.1`, `1e`, `+1`, `0x10`, `1_000`, `Infinity`, `NaN`, `[`, `]`, `{"a":1}}`, `""""`, ``,
	} {
		requireSameAsJCS(t, []byte(doc))
	}
	requireSameAsJCS(t, nil)
}

// TestJSONMatchesJCSOnRepeatedObjects compares the two where the writer
// reuses the order of the last out-of-order object at the same level: on
// siblings with the same names, and on siblings whose names differ from the
// last one's in text, number or arrival order only, within a document and
// from one document to the next.
func TestJSONMatchesJCSOnRepeatedObjects(t *testing.T) {
	t.Parallel()
	item := `{"POSEX":"%d","ACTION":"001","@SEGMENT":"1","E1EDP19":{"QUALF":"001","IDTNR":"M%d"}}`
	for _, doc := range []string{
		`[` + fmt.Sprintf(item, 1, 1) + `,` + fmt.Sprintf(item, 2, 2) + `,` + fmt.Sprintf(item, 3, 3) + `]`,
		// The same names, one of them escaped: the same text, so the same
		// order.
		`[{"b":1,"a":2},{"\u0062":3,"a":4},{"b":5,"\u0061":6}]`,
		// One name other, one name more or fewer, the same names arriving
		// in another order, a name repeated.
		`[{"c":1,"a":2,"b":3},{"c":1,"b":2,"a":3},{"z":1,"y":2,"x":3},{"c":1,"a":2,"d":3},{"c":1,"a":2,"b":3,"0":4}]`,
		`[{"c":1,"a":2,"b":3},{"a":1,"c":2,"a":3}]`,
		`[{"c":1,"a":2,"b":3},{"c":1,"a":2,"\u0063":3}]`,
		`[{"b":1,"a":2},{"b":1,"c":2},{"b":1},{"a":2,"b":1},{"b":1,"a":2}]`,
		// Names of characters from U+E000 up, whose UTF-16 order is not
		// their UTF-8 order.
		`[{"\ufb33":1,"\ud83d\ude00":2},{"\ufb33":3,"\ud83d\ude00":4}]`,
		// The same names at another level keep their own order.
		`{"b":{"y":1,"x":2},"a":[{"y":3,"x":4}],"c":{"b":5,"a":6}}`,
		// The next document, whose first object repeats the last one's
		// names at a level some earlier document's object used.
		`{"c":{"b":7,"a":8}}`, `{"c":{"b":7,"a":8,"b":9}}`,
	} {
		requireSameAsJCS(t, []byte(doc))
	}
}

// TestJSONMatchesJCSOnGeneratedDocuments compares the two on documents
// generated to mix everything RFC 8785 treats specially, now and then made
// invalid in one of the ways I-JSON forbids.
func TestJSONMatchesJCSOnGeneratedDocuments(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(8785, 1))
	for range 20000 {
		requireSameAsJCS(t, generateJSON(r))
	}
}

// FuzzJSONMatchesJCS is the differential fuzz target: on any input, the two
// implementations agree on whether it is canonicalisable and on the result.
func FuzzJSONMatchesJCS(f *testing.F) {
	r := rand.New(rand.NewPCG(1, 2))
	for range 64 {
		f.Add(generateJSON(r))
	}
	for _, seed := range []string{`1e400`, `{"a":1,"\u0061":2}`, `"\ud800"`, "\"\xff\"", `[1e21,-0,0.1]`} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		requireSameAsJCS(t, raw)
	})
}

// generateJSON returns a random JSON document; about one in ten is not
// I-JSON.
func generateJSON(r *rand.Rand) []byte {
	g := generator{r: r}
	g.value(0)
	return g.buf
}

type generator struct {
	r   *rand.Rand
	buf []byte
}

func (g *generator) space() {
	if g.r.IntN(4) == 0 {
		g.buf = append(g.buf, " \t\n\r"[g.r.IntN(4)])
	}
}

func (g *generator) value(depth int) {
	g.space()
	switch k := g.r.IntN(10); {
	case k < 2 && depth < 5:
		g.object(depth)
	case k < 4 && depth < 5:
		g.array(depth)
	case k < 6:
		g.str()
	case k < 9:
		g.number()
	default:
		g.buf = append(g.buf, []string{"true", "false", "null"}[g.r.IntN(3)]...)
	}
	g.space()
}

func (g *generator) object(depth int) {
	g.buf = append(g.buf, '{')
	n := g.r.IntN(6)
	for i := range n {
		if i > 0 {
			g.buf = append(g.buf, ',')
		}
		g.space()
		if g.r.IntN(60) == 0 {
			// A name that may repeat one before it, spelled alike or not.
			g.buf = append(g.buf, []string{`"a"`, `"\u0061"`, `"b"`}[g.r.IntN(3)]...)
		} else {
			g.str()
		}
		g.space()
		g.buf = append(g.buf, ':')
		g.value(depth + 1)
	}
	g.buf = append(g.buf, '}')
}

func (g *generator) array(depth int) {
	g.buf = append(g.buf, '[')
	n := g.r.IntN(6)
	for i := range n {
		if i > 0 {
			g.buf = append(g.buf, ',')
		}
		g.value(depth + 1)
	}
	g.buf = append(g.buf, ']')
}

// stringParts are pieces a string is assembled from: plain text, every kind
// of escape, characters whose UTF-16 order differs from their code point
// order, and (rarely chosen) the invalid ones.
var stringParts = []string{
	"a", "Z", "0", " ", "BELNR", "\u00e9", "\u20ac", "\ufb33", "\U0001F600", "\u2028", "\x7f", "<>&",
	`\"`, `\\`, `\/`, `\b`, `\f`, `\n`, `\r`, `\t`, `\u0000`, `\u001F`, `\u0041`, `\u00E9`, `\u20ac`,
	`\ud83d\ude00`, `\uD834\uDD1E`, `\uffff`, `\ufeff`,
}

var invalidStringParts = []string{`\ud800`, `\udfff`, `\ud800\u0041`, "\xff", "\xc3", "\xed\xa0\x80", "\x01", `\x`}

func (g *generator) str() {
	g.buf = append(g.buf, '"')
	for range g.r.IntN(6) {
		if g.r.IntN(150) == 0 {
			g.buf = append(g.buf, invalidStringParts[g.r.IntN(len(invalidStringParts))]...)
			continue
		}
		g.buf = append(g.buf, stringParts[g.r.IntN(len(stringParts))]...)
	}
	g.buf = append(g.buf, '"')
}

func (g *generator) number() {
	switch g.r.IntN(8) {
	case 0:
		g.buf = fmt.Appendf(g.buf, "%d", g.r.Int64()-g.r.Int64())
	case 1:
		g.buf = fmt.Appendf(g.buf, "%d", g.r.IntN(1000))
	case 2:
		g.buf = fmt.Appendf(g.buf, "%g", g.r.NormFloat64()*1e6)
	case 3:
		g.buf = fmt.Appendf(g.buf, "%de%d", g.r.IntN(100), g.r.IntN(700)-350)
	case 4:
		g.buf = fmt.Appendf(g.buf, "%d.%0*d", g.r.IntN(10), 1+g.r.IntN(20), g.r.Uint64())
	case 5:
		g.buf = fmt.Appendf(g.buf, "%.17g", g.r.Float64()*float64(g.r.Uint64()))
	case 6:
		g.buf = append(g.buf, []string{"-0", "0.0", "1e21", "1e-7", "5e-324", "1.7976931348623157e308", "1e309", "-1e400"}[g.r.IntN(8)]...)
	default:
		// Digits enough to lose precision in a double.
		for i := range 1 + g.r.IntN(30) {
			g.buf = append(g.buf, byte('0'+g.r.IntN(9)+min(i, 1)))
		}
	}
}
