package canon_test

import (
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"testing"
	"unicode/utf8"

	"github.com/lefia/edihub/internal/canon"
)

// FuzzCanonJSON checks that canonicalisation is idempotent: the canonical
// form of a canonical document is itself; and that the writer's shape
// hash is the one ShapeHash finds by scanning the form.
func FuzzCanonJSON(f *testing.F) {
	for _, seed := range []string{
		`{"b":1,"a":[1.0,2e3,-0,"x"]}`,
		`{"\u20ac":1,"\ud83d\ude00":2,"\r":3}`,
		`"tab\there \u001f \u2028 <&>"`,
		`[1e21,1e-7,0.1,333333333.33333329]`,
		`{"a":1,"a":2}`,
		`{"a":{"b":{"c":[true,false,null]}}}`,
		"\"\xff\"",
		`"\ud800"`,
		`{"x":[ {"b":[{"c":1}],"a":2} ],"y":[{"z":1},{"z":2}]}`,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		once, err := canon.JSON(raw)
		if err != nil {
			return
		}
		twice, err := canon.JSON(once)
		if err != nil {
			t.Fatalf("canonical output %q rejected: %v", once, err)
		}
		if !bytes.Equal(once, twice) {
			t.Fatalf("not idempotent: %q then %q", once, twice)
		}
		c, err := canon.Canonicalise(raw)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Release()
		content := sha256.Sum256(c.Bytes())
		if written, scanned := c.ShapeHash(content), canon.ShapeHash(c.Bytes(), content); written != scanned {
			t.Fatalf("the writer's shape hash of %q is not the scan's", raw)
		}
	})
}

// FuzzAppendString checks that AppendString writes exactly what JCS would:
// its output, parsed and canonicalised again, is unchanged, and a valid
// UTF-8 string reads back as itself.
func FuzzAppendString(f *testing.F) {
	for _, seed := range []string{"", "plain", "\x00\b\t\n\f\r\x1f\x7f", `"\`, "Müller 😀 \u2028", "\xff"} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, s string) {
		out := canon.AppendString(nil, s)
		again, err := canon.JSON(out)
		if err != nil {
			t.Fatalf("AppendString(%q) = %q is not JSON: %v", s, out, err)
		}
		if !bytes.Equal(out, again) {
			t.Fatalf("AppendString(%q) = %q, JCS gives %q", s, out, again)
		}
		if !utf8.ValidString(s) {
			return
		}
		var back string
		if err := json.Unmarshal(out, &back); err != nil || back != s {
			t.Fatalf("AppendString(%q) = %q reads back as %q (%v)", s, out, back, err)
		}
	})
}
