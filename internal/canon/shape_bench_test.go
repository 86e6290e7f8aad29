package canon_test

import (
	"bytes"
	"crypto/sha256"
	"testing"

	"github.com/lefia/edihub/internal/canon"
	"github.com/lefia/edihub/internal/loadgen"
)

// BenchmarkShapeHash works out the shape hash of make bench's 2 KiB
// ORDERS05 payload from its canonical form and content hash, as ingest
// does for every new message. Its arrays hold several objects each, so
// the form is its own shape form, found by scanning it for one-object
// arrays: the scan is what is measured.
func BenchmarkShapeHash(b *testing.B) {
	form, err := canon.JSON(loadgen.NewDocument(2048).Payload(1))
	if err != nil {
		b.Fatal(err)
	}
	content := sha256.Sum256(form)
	if !bytes.Contains(form, []byte("[{")) || canon.ShapeHash(form, content) != content {
		b.Fatal("the payload is not a shape form with arrays of objects, which the benchmark measures the scan of")
	}
	b.SetBytes(int64(len(form)))
	for b.Loop() {
		canon.ShapeHash(form, content)
	}
}
