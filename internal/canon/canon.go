// Package canon produces canonical JSON per RFC 8785 (the JSON Canonicalization
// Scheme, JCS) and the hashes built on it.
//
// The canonical form is computed by github.com/gowebpki/jcs. RFC 8785 only
// defines a canonical form for I-JSON (RFC 7493), and this package keeps to
// that: JSON rejects a document with duplicate object member names (compared
// after unescaping, so "a" and "\u0061" are the same name), invalid UTF-8,
// lone or mismatched UTF-16 surrogate escapes, and numbers outside the range
// of an IEEE 754 double. jcs v1.0.2 already rejects all of these itself;
// canon_test.go pins that behaviour so an upgrade that silently accepted
// duplicate keys would fail the tests rather than let two different
// documents share one hash.
package canon

import (
	"crypto/sha256"
	"fmt"

	"github.com/gowebpki/jcs"
)

// JSON returns the RFC 8785 canonical form of the JSON document raw. A
// document that is not I-JSON (see the package comment) is an error.
func JSON(raw []byte) ([]byte, error) {
	out, err := jcs.Transform(raw)
	if err != nil {
		return nil, fmt.Errorf("canonicalise JSON: %w", err)
	}
	return out, nil
}

// ContentHash returns the SHA-256 of the canonical form of raw. Two payloads
// that differ only in member order or insignificant whitespace have the same
// content hash, which is what tells an exact copy of a message from a changed
// one that happens to share its business key.
func ContentHash(raw []byte) ([32]byte, error) {
	canonical, err := JSON(raw)
	if err != nil {
		return [32]byte{}, fmt.Errorf("content hash: %w", err)
	}
	return sha256.Sum256(canonical), nil
}
