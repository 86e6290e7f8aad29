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
// payload, so the work is done by the encoder of
// github.com/go-json-experiment/json/jsontext (the Go team's JSON v2
// tokenizer), which canonicalises in place in one buffer. The two agree on
// every document but one kind: jsontext clamps a number beyond the range of a
// double to ±1.7976931348623157e+308, where jcs refuses it. That value has
// exactly one canonical spelling, so whenever it appears in the output jcs
// decides instead. jcs_test.go and the fuzz targets compare both
// implementations on generated and random documents, and canon_test.go pins
// the refusals, so an upgrade of either that changed a single byte would
// fail the tests rather than change stored hashes.
package canon

import (
	"bytes"
	"crypto/sha256"
	"fmt"
	"sync"

	"github.com/go-json-experiment/json/jsontext"
	"github.com/gowebpki/jcs"
)

// Canonical is the canonical form of one document, held in a buffer that is
// reused for the next document once Release is called.
type Canonical struct {
	buf bytes.Buffer
	enc *jsontext.Encoder
}

var canonicals = sync.Pool{New: func() any { return new(Canonical) }}

// clampedMax is how jsontext writes a number too large for a double; see the
// package comment.
var clampedMax = []byte("1.7976931348623157e+308")

// Canonicalise returns the RFC 8785 canonical form of the JSON document raw.
// A document that is not I-JSON (see the package comment) is an error. The
// caller must call Release when done with the result and must not keep
// Bytes beyond that.
func Canonicalise(raw []byte) (*Canonical, error) {
	c := canonicals.Get().(*Canonical)
	c.buf.Reset()
	// The canonical form is rarely longer than its input. The encoder keeps
	// a quarter of the buffer's length free after writing, and doubles the
	// buffer when less is left, so room for a quarter more is made up front:
	// one allocation (or none, for a reused buffer) then usually suffices.
	c.buf.Grow(len(raw) + len(raw)/4 + 64)
	if c.enc == nil {
		c.enc = jsontext.NewEncoder(&c.buf, options...)
	} else {
		c.enc.Reset(&c.buf, options...)
	}
	if err := c.enc.WriteValue(raw); err != nil {
		c.Release()
		return nil, fmt.Errorf("canonicalise JSON: %w", err)
	}
	// An encoder that writes to a stream ends each top-level value with a
	// newline, which is no part of the canonical form.
	// (Canonical JSON never ends in a newline of its own: one in a string
	// is escaped.)
	if out := c.buf.Bytes(); len(out) > 0 && out[len(out)-1] == '\n' {
		c.buf.Truncate(len(out) - 1)
	}
	if bytes.Contains(c.buf.Bytes(), clampedMax) {
		out, err := jcs.Transform(raw)
		if err != nil {
			c.Release()
			return nil, fmt.Errorf("canonicalise JSON: %w", err)
		}
		c.buf.Reset()
		c.buf.Write(out)
	}
	return c, nil
}

// options make the jsontext encoder write RFC 8785: numbers in their
// ECMAScript form, object members sorted by UTF-16 code units, strings in
// their shortest escaping without HTML escapes. Duplicate names and invalid
// UTF-8 (lone surrogate escapes included) are refused by default; they are
// named here so that the choice is visible.
var options = []jsontext.Options{
	jsontext.CanonicalizeRawInts(true),
	jsontext.CanonicalizeRawFloats(true),
	jsontext.ReorderRawObjects(true),
	jsontext.AllowDuplicateNames(false),
	jsontext.AllowInvalidUTF8(false),
	jsontext.EscapeForHTML(false),
	jsontext.EscapeForJS(false),
}

// Bytes is the canonical form, valid until Release.
func (c *Canonical) Bytes() []byte { return c.buf.Bytes() }

// Release hands the buffer back for reuse.
func (c *Canonical) Release() { canonicals.Put(c) }

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
