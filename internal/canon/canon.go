// Package canon produces canonical JSON per RFC 8785 (the JSON Canonicalization
// Scheme, JCS) and the hashes built on it.
//
// RFC 8785 only defines a canonical form for I-JSON (RFC 7493), and this
// package keeps to that: JSON rejects a document with duplicate object member
// names (compared after unescaping, so "a" and "\u0061" are the same name),
// invalid UTF-8, lone or mismatched UTF-16 surrogate escapes, numbers outside
// the range of an IEEE 754 double, and nesting deeper than 10,000 levels.
//
// The canonical form is the one github.com/gowebpki/jcs defines: its output
// is what every stored content hash was computed from. jcs builds a tree of
// the whole document, which costs about 15 bytes of garbage per byte of
// payload, and jsontext's canonicalising encoder, used before, reads every
// object it wrote a second time to reorder it; canonicalising was a third
// of edihub's CPU for a batch of new messages. So the work is done by a
// writer of this package (writer.go) that reads the document once and
// writes each value in place, moving an object's members only when they
// arrived out of order (in the order found for the last object with the
// same names at its level, when there is one, without sorting again); numbers other than short integers are written by
// jcs's own ECMAScript formatter. jcs_test.go and the fuzz targets hold the
// writer to jcs byte for byte, and to its refusals, on generated and random
// documents, and canon_test.go pins the refusals, so a change of either
// that altered a single byte would fail the tests rather than change stored
// hashes.
package canon

import (
	"bytes"
	"crypto/sha256"
	"fmt"
	"slices"
	"sync"

	"github.com/go-json-experiment/json/jsontext"
)

// Canonical is the canonical form of one document, held in a buffer that is
// reused for the next document once Release is called.
type Canonical struct {
	w writer
}

var canonicals = sync.Pool{New: func() any { return new(Canonical) }}

// Canonicalise returns the RFC 8785 canonical form of the JSON document raw.
// A document that is not I-JSON (see the package comment) is an error. The
// caller must call Release when done with the result and must not keep
// Bytes beyond that.
func Canonicalise(raw []byte) (*Canonical, error) {
	c := canonicals.Get().(*Canonical)
	w := &c.w
	w.src, w.pos, w.depth, w.oneObjectArrays = raw, 0, 0, 0
	w.members, w.names = w.members[:0], w.names[:0]
	// The canonical form is rarely longer than its input.
	w.out = slices.Grow(w.out[:0], len(raw))
	if err := w.document(); err != nil {
		c.Release()
		return nil, fmt.Errorf("canonicalise JSON: %w", err)
	}
	return c, nil
}

// Bytes is the canonical form, valid until Release.
func (c *Canonical) Bytes() []byte { return c.w.out }

// ShapeHash is ShapeHash of the canonical form, whose content hash is
// contentHash. The writer counted the one-object arrays it wrote, so a form
// without any, as most are, is known to be its own shape form without
// being scanned for them.
func (c *Canonical) ShapeHash(contentHash [32]byte) [32]byte {
	if c.w.oneObjectArrays == 0 {
		return contentHash
	}
	return ShapeHash(c.w.out, contentHash)
}

// Release hands the buffer back for reuse.
func (c *Canonical) Release() {
	c.w.src = nil
	canonicals.Put(c)
}

// JSON returns the RFC 8785 canonical form of the JSON document raw in a
// slice of its own. A document that is not I-JSON (see the package comment)
// is an error.
func JSON(raw []byte) ([]byte, error) {
	c, err := Canonicalise(raw)
	if err != nil {
		return nil, err
	}
	defer c.Release()
	return bytes.Clone(c.Bytes()), nil
}

// ContentHash returns the SHA-256 of the canonical form of raw. Two payloads
// that differ only in member order or insignificant whitespace have the same
// content hash, which is what tells an exact copy of a message from a changed
// one that happens to share its business key.
func ContentHash(raw []byte) ([32]byte, error) {
	c, err := Canonicalise(raw)
	if err != nil {
		return [32]byte{}, fmt.Errorf("content hash: %w", err)
	}
	defer c.Release()
	return sha256.Sum256(c.Bytes()), nil
}

// Unquote returns the text of the JSON string raw (quotes included), read
// as documents are read here (see the package comment): invalid UTF-8 and a
// lone or mismatched surrogate escape such as "\ud800" are an error. A
// lenient reader (gjson, encoding/json) puts U+FFFD in their place, which
// would make two different strings one.
func Unquote(raw string) (string, error) {
	text, err := jsontext.AppendUnquote(make([]byte, 0, len(raw)), raw)
	if err != nil {
		return "", fmt.Errorf("unquote JSON string: %w", err)
	}
	return string(text), nil
}
