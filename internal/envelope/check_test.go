package envelope

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/require"
	"github.com/tidwall/gjson"

	"github.com/lefia/edihub/internal/apperr"
	"github.com/lefia/edihub/internal/loadgen"
)

// oldCheckJSON is CheckJSON as it was before it read the body once: three
// checks of the whole body, UTF-8, depth and gjson's grammar. It is the
// oracle the single pass must agree with, message for message, and the cost
// the pass is measured against. depth counting from no open container is
// the old depth, held to its byte-by-byte rule by FuzzDepth.
func oldCheckJSON(body []byte) error {
	if !utf8.Valid(body) {
		return apperr.New(apperr.Invalid, "malformed-json", "the body is not valid UTF-8")
	}
	if depth(body, 0) > MaxDepth {
		return apperr.New(apperr.Invalid, "malformed-json", "the body nests deeper than %d levels", MaxDepth)
	}
	if !gjson.ValidBytes(body) {
		return apperr.New(apperr.Invalid, "malformed-json", "the body is not valid JSON")
	}
	return nil
}

// checkJSONSeeds are bodies at the edges of the grammar, of UTF-8 and of
// the nesting limit, with the samples added by FuzzCheckJSONMatchesOld.
func checkJSONSeeds() []string {
	open, closed := strings.Repeat("[", MaxDepth), strings.Repeat("]", MaxDepth)
	objects := strings.Repeat(`{"a":`, MaxDepth)
	seeds := []string{
		// Whitespace and emptiness.
		"", " ", "\t\r\n", " \t\r\n{}\n", "\f{}", "\v{}", "{}\xc2\xa0", "{}\x00", `{ "a" : [ 1 , 2 ] }`, "[\n]",
		// Numbers.
		"0", "-0", "1e5", "01", "1.", ".5", "-", "+1", "1E+5", "1e-5", "1e", "1e+", "-01", "0.0", "00", "1.5e3", "1.e5",
		"0x10", "Infinity", "NaN", "[1,-]", "[-0.0e-0]", "[01]", "[1.]", "-a", "12345678901234567890", "[0e0,0E-0,-1.0E+10]",
		// Literals.
		"true", "false", "null", "fals", "nul", "tru", "truee", "TRUE", "null ", "[true,false,null]", "nulll", "[nul]", "{\"a\":t}",
		// Trailing garbage and structure.
		"{} x", "{}}", "[]]", "{}{}", "1 2", `"a" "b"`, `{"a"}`, `{"a":}`, "{,}", `{"a":1,}`, "[1,]", "[,]", "[,1]", "{1:2}",
		`{"a" 1}`, "[}", "{]", `{"a":1]`, `{"a":1 "b":2}`, `["a":1]`, `{"a":1,,"b":2}`, `[1 2]`, "[", "{", `{"a"`, `{"a":`, `{"a":1`,
		// Strings, escapes and control characters.
		`""`, `"`, `"a`, `"\\"`, `"\\\""`, `"\\\\"`, `"\"`, `"\x"`, `"\/"`, `"\'"`, `"\U0041"`, `"\ud800"`, `"\ud83d\ude00"`,
		`"\ude00\ud83d"`, `"\u00"`, `"\u00g0"`, `"\u00E9\u00e9"`, `"\u`, `"\`, "\"a\tb\"", "\"\x00\"", "\"\x7f\"", "\"\x1f\"",
		`"\\\\\"[["`, `["\"",["x\\\\"],{}]`, `{"a":[1,{"b":"}]"}]}`,
		// UTF-8 in and out of strings.
		"\xff", "\"\xff\"", "\"\xc3\"", "\"\xc3(\"", "\"\xed\xa0\x80\"", "\"\xf4\x90\x80\x80\"", "\"\xc0\xaf\"", "[\"é\", \"\xe9\"]",
		"[é]", "{\"a\":1}\xff", "\"日本語 – ünïcödé 😀\"", "\"😀\xf0\x9f\x98\"", "\"ab\xc3", "\xef\xbb\xbf{}", "[\"\x80\"]",
		// Nesting at and past the limit, also inside strings, after
		// unterminated strings and after the grammar has already failed.
		strings.Repeat("[", MaxDepth-1) + strings.Repeat("]", MaxDepth-1),
		open + closed,
		open + "[" + "]" + closed,
		strings.Repeat("[", MaxDepth+2),
		objects + "1" + strings.Repeat("}", MaxDepth),
		objects + "{}" + strings.Repeat("}", MaxDepth),
		objects + `{"a":1}` + strings.Repeat("}", MaxDepth),
		`"` + open + `["`,
		`"` + open + `[`,
		`["` + open + `[", 1]`,
		open + `"`,
		open + `"` + "[",
		open + `1[`,
		open + `"\x"[`,
		open + "\x01[",
		`1 ` + open + `[`,
		`] ` + open + `[`,
		open + "[\xff",
		"\xff" + open + "[",
		open + "\"\xff\"[",
		open + `"\"[`,
		open + `"\\"[`,
		`{"a":"` + strings.Repeat(`\`, 7) + `"` + open + `["}`,
		`{"a":"` + strings.Repeat(`\`, 8) + `"` + open + `["}`,
		"[tru" + open + "[",
		"[1." + open + "[",
		"[1e" + open,
	}
	// Each kind of byte a string cannot hold as it is, at every offset of
	// the eight-byte steps and at the end of the body.
	for _, special := range []string{`"`, `\\`, `\`, "\x01", "\x1f", "é", "\xff", "\xc3"} {
		for n := range 17 {
			seeds = append(seeds, `"`+strings.Repeat("a", n)+special+strings.Repeat("b", 17-n)+`"`)
			seeds = append(seeds, `"`+strings.Repeat("a", n)+special)
		}
	}
	return seeds
}

func FuzzCheckJSONMatchesOld(f *testing.F) {
	for _, seed := range checkJSONSeeds() {
		f.Add([]byte(seed))
	}
	samples, err := filepath.Glob(filepath.Join("testdata", "*.json"))
	require.NoError(f, err)
	require.NotEmpty(f, samples)
	for _, name := range samples {
		sample, err := os.ReadFile(name)
		require.NoError(f, err)
		f.Add(sample)
		f.Add(sample[:len(sample)/2])
	}
	doc := loadgen.NewDocument(2048)
	f.Add(doc.Envelope(1))
	f.Add(batchBody(doc, 3))
	f.Fuzz(func(t *testing.T, body []byte) {
		got, want := CheckJSON(body), oldCheckJSON(body)
		if want == nil {
			if got != nil {
				t.Fatalf("CheckJSON(%q) = %v, the three checks accept it", body, got)
			}
			return
		}
		g, ok := apperr.As(got)
		if !ok {
			t.Fatalf("CheckJSON(%q) = %v, the three checks say %q", body, got, want)
		}
		w, _ := apperr.As(want)
		if g.Kind != w.Kind || g.Type != w.Type || g.Detail != w.Detail {
			t.Fatalf("CheckJSON(%q) = %s %q, the three checks say %s %q", body, g.Type, g.Detail, w.Type, w.Detail)
		}
	})
}

// batchBody is a receive-messages body of n envelopes, as the load
// generator builds one.
func batchBody(doc *loadgen.Document, n int) []byte {
	var b bytes.Buffer
	b.WriteString(`{"messages":[`)
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		b.Write(doc.Envelope(uint64(i + 1)))
	}
	b.WriteString("]}")
	return b.Bytes()
}

// BenchmarkCheckJSON measures the single pass against the three checks it
// replaced on an envelope of 2 KiB, a batch of 100 of them and a payload
// of 5 MiB.
func BenchmarkCheckJSON(b *testing.B) {
	bodies := []struct {
		name string
		body []byte
	}{
		{"envelope-2KiB", loadgen.NewDocument(2048).Envelope(1)},
		{"batch-100x2KiB", batchBody(loadgen.NewDocument(2048), 100)},
		{"payload-5MiB", loadgen.NewDocument(5 << 20).Envelope(1)},
	}
	checks := []struct {
		name  string
		check func([]byte) error
	}{
		{"old", oldCheckJSON},
		{"new", CheckJSON},
	}
	for _, body := range bodies {
		for _, c := range checks {
			b.Run(fmt.Sprintf("%s/%s", body.name, c.name), func(b *testing.B) {
				b.SetBytes(int64(len(body.body)))
				for b.Loop() {
					if err := c.check(body.body); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}
