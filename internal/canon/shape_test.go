package canon_test

import (
	"crypto/sha256"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/lefia/edihub/internal/canon"
)

func shapeHash(t *testing.T, doc string) ([32]byte, bool) {
	t.Helper()
	c, err := canon.JSON([]byte(doc))
	require.NoError(t, err)
	content := sha256.Sum256(c)
	shape := canon.ShapeHash(c, content)
	return shape, shape != content
}

func TestShapeHash(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name     string
		a, b     string
		same     bool
		reshaped bool // of b
	}{
		{name: "a segment as an object and as a one-item array", a: `{"S":{"Q":"1"}}`, b: `{"S":[{"Q":"1"}]}`, same: true, reshaped: true},
		{name: "nested segments, each either way", a: `{"I":{"S":{"T":{"V":1}},"x":[1,2]}}`, b: `{"I":[{"S":[{"T":[{"V":1}]}],"x":[1,2]}]}`, same: true, reshaped: true},
		{name: "member order and spacing do not matter", a: `{"S":{"a":1,"b":2}}`, b: ` { "S" : [ { "b" : 2 , "a" : 1 } ] } `, same: true, reshaped: true},
		{name: "the item's content still counts", a: `{"S":{"Q":"1"}}`, b: `{"S":[{"Q":"2"}]}`, reshaped: true},
		{name: "two items are two segments", a: `{"S":{"Q":"1"}}`, b: `{"S":[{"Q":"1"},{"Q":"1"}]}`},
		{name: "a one-item array of a string is kept", a: `{"S":"1"}`, b: `{"S":["1"]}`},
		{name: "an empty array is kept", a: `{"S":{}}`, b: `{"S":[]}`},
		{name: "an array of one array is kept", a: `{"S":{"Q":1}}`, b: `{"S":[[{"Q":1}]]}`, reshaped: true},
		{name: "brackets inside strings are text", a: `{"S":"[{\"Q\":1}]"}`, b: `{"S":"[{\"Q\":1}]"}`, same: true},
		{name: "escaped quotes do not end a string", a: `{"S":"\"[{"}`, b: `{"S":"\"[{"}`, same: true},
		{name: "a one-item array at the root", a: `{"Q":1}`, b: `[{"Q":1}]`, same: true, reshaped: true},
		{name: "an object item of a longer array is kept", a: `{"S":[{"Q":1},2]}`, b: `{"S":[{"Q":1},2]}`, same: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			ha, _ := shapeHash(t, tc.a)
			hb, reshaped := shapeHash(t, tc.b)
			require.Equal(t, tc.same, ha == hb)
			require.Equal(t, tc.reshaped, reshaped)
		})
	}
}

// Without a one-item array of an object, the shape form is the canonical
// form, so its hash is the content hash.
func TestShapeHashOfAPlainDocumentIsItsContentHash(t *testing.T) {
	t.Parallel()
	c, err := canon.JSON([]byte(`{"b":[{"x":1},{"x":2}],"a":"[{"}`))
	require.NoError(t, err)
	content := sha256.Sum256(c)
	require.Equal(t, content, canon.ShapeHash(c, content))
}

// The samples: the order with E1EDK02 as an array has the order's shape
// form; the order with changed content does not.
func TestShapeHashOfTheSamples(t *testing.T) {
	t.Parallel()
	hashOf := func(name string) (content, shape [32]byte) {
		raw, err := os.ReadFile(filepath.Join("..", "fingerprint", "testdata", name)) // the samples, as the fingerprint tests read them
		require.NoError(t, err)
		c, err := canon.JSON(raw)
		require.NoError(t, err)
		content = sha256.Sum256(c)
		return content, canon.ShapeHash(c, content)
	}
	order, orderShape := hashOf("orders05.json")
	array, arrayShape := hashOf("orders05_e1edk02_as_array.json")
	_, changedShape := hashOf("orders05_changed_content_same_belnr.json")
	require.NotEqual(t, order, array, "the content hashes differ")
	require.Equal(t, orderShape, arrayShape, "the shape forms are equal")
	require.NotEqual(t, orderShape, changedShape)
}

// The shape hash of a document the writer canonicalised is the one
// ShapeHash finds by scanning its form, whether the writer counted a
// one-object array in it or none.
func TestCanonicalShapeHashMatchesTheScan(t *testing.T) {
	t.Parallel()
	for _, doc := range []string{
		`{"a":1}`, `[]`, `[1]`, `["{"]`, `[{}]`, `[ {"a":1} ]`, `[{"a":1},{"b":2}]`, `[[{"a":1}]]`,
		`{"x":[{"b":[{"c":1}],"a":2}],"y":[{"z":1},{"z":2}]}`, `{"b":[{"q":1}],"a":[{"q":1},"s"]}`,
		`[{"a":"[{\"b\":1}]"}]`, `{"s":"[{","t":[1,{"u":[{}]}]}`,
	} {
		shapeOfBoth(t, []byte(doc))
	}
	for _, name := range []string{"orders05.json", "orders05_e1edk02_as_array.json", "invoic02.json"} {
		raw, err := os.ReadFile(filepath.Join("..", "fingerprint", "testdata", name))
		require.NoError(t, err)
		shapeOfBoth(t, raw)
	}
}

// shapeOfBoth checks that the writer's shape hash of raw is the scan's.
func shapeOfBoth(t *testing.T, raw []byte) {
	t.Helper()
	c, err := canon.Canonicalise(raw)
	require.NoError(t, err)
	defer c.Release()
	content := sha256.Sum256(c.Bytes())
	require.Equal(t, canon.ShapeHash(c.Bytes(), content), c.ShapeHash(content), "%s", raw)
}
