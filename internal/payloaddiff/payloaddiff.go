// Package payloaddiff compares two JSON payloads structurally and reports
// what a reader of the two documents sees: values added, removed and
// changed, each at its JSON Pointer (RFC 6901) path. Objects are compared
// member by member and arrays index by index.
//
// A segment that is an object in one payload and a one-item array holding
// an object in the other is a shape change (Shape), not a changed value:
// XML-to-JSON converters write a segment that occurs once either way, and
// key paths read both alike (canon.ShapeHash, which ingest uses to tell
// such a copy from a changed one, applies the same rule). The object and
// the item are then compared as any two objects are, at the paths of the
// array's side, which end in /0 at that segment.
//
// Both payloads are first brought to their RFC 8785 canonical form (package
// canon), the form content hashes are taken from, so two payloads differ
// here exactly when their content hashes differ: member order, whitespace
// and number spelling (1.0 and 1) are never reported.
//
// github.com/wI2L/jsondiff was considered. Its RFC 6902 patch is a program
// for turning one document into the other, so its paths are positions
// during that program: "/-" for an appended item, the same index repeated
// for several removed ones, indices shifted by earlier operations once
// arrays are aligned. An admin reading the two payloads side by side needs
// the locations in the documents themselves, and translating patch paths
// back takes more code than this comparison.
package payloaddiff

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/lefia/edihub/internal/canon"
)

// Kind is what happened to a value.
type Kind string

const (
	Added   Kind = "added"   // only in the second payload
	Removed Kind = "removed" // only in the first payload
	Changed Kind = "changed" // in both, with another value (or type)
	// Shape is an object in one payload and a one-item array of an object
	// in the other; Old and New show which was which ({…} or [{…}]).
	Shape Kind = "shape"
)

// ShapeOnly reports whether changes, not empty, are all shape changes: the
// two payloads say the same thing, wrapped differently.
func ShapeOnly(changes []Change) bool {
	for _, c := range changes {
		if c.Kind != Shape {
			return false
		}
	}
	return len(changes) > 0
}

// Change is one difference. Old and New are the values as compact JSON, ""
// where the value is absent (Old of an added one, New of a removed one).
type Change struct {
	Kind Kind
	Path string // JSON Pointer; "" is the whole document
	Old  string
	New  string
}

// Compare returns the differences that turn payload a into payload b,
// ordered by path (object members by name, array items by index). Equal
// content yields no change. A payload that is not I-JSON is an error.
func Compare(a, b []byte) ([]Change, error) {
	va, err := decode(a)
	if err != nil {
		return nil, fmt.Errorf("first payload: %w", err)
	}
	vb, err := decode(b)
	if err != nil {
		return nil, fmt.Errorf("second payload: %w", err)
	}
	var d differ
	d.compare("", va, vb)
	return d.changes, d.err
}

// decode reads the canonical form of raw with its numbers kept as their
// canonical text, so that numbers compare exactly, whatever their size.
func decode(raw []byte) (any, error) {
	canonical, err := canon.JSON(raw)
	if err != nil {
		return nil, err
	}
	dec := json.NewDecoder(bytes.NewReader(canonical))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, fmt.Errorf("decode canonical JSON: %w", err)
	}
	return v, nil
}

type differ struct {
	changes []Change
	err     error
}

func (d *differ) compare(path string, a, b any) {
	switch va := a.(type) {
	case map[string]any:
		if vb, ok := b.(map[string]any); ok {
			d.compareObjects(path, va, vb)
			return
		}
		if item, ok := oneObject(b); ok {
			d.changes = append(d.changes, Change{Kind: Shape, Path: path, Old: objectShape, New: arrayShape})
			d.compareObjects(path+"/0", va, item)
			return
		}
	case []any:
		if vb, ok := b.([]any); ok {
			d.compareArrays(path, va, vb)
			return
		}
		item, isOne := oneObject(a)
		if vb, ok := b.(map[string]any); ok && isOne {
			d.changes = append(d.changes, Change{Kind: Shape, Path: path, Old: arrayShape, New: objectShape})
			d.compareObjects(path+"/0", item, vb)
			return
		}
	default:
		// Scalars of the canonical form are equal exactly when they are
		// the same Go value: a string, a json.Number's canonical text, a
		// bool or nil.
		if a == b {
			return
		}
	}
	d.add(Changed, path, a, b)
}

// How a shape change shows each side.
const (
	objectShape = "{…}"
	arrayShape  = "[{…}]"
)

// oneObject returns the item of v when v is an array of exactly one
// object.
func oneObject(v any) (map[string]any, bool) {
	if a, ok := v.([]any); ok && len(a) == 1 {
		item, ok := a[0].(map[string]any)
		return item, ok
	}
	return nil, false
}

func (d *differ) compareObjects(path string, a, b map[string]any) {
	names := make([]string, 0, len(a)+len(b))
	for name := range a {
		names = append(names, name)
	}
	for name := range b {
		if _, inA := a[name]; !inA {
			names = append(names, name)
		}
	}
	slices.Sort(names)
	for _, name := range names {
		p := path + "/" + escape(name)
		va, inA := a[name]
		vb, inB := b[name]
		switch {
		case !inA:
			d.add(Added, p, nil, vb)
		case !inB:
			d.add(Removed, p, va, nil)
		default:
			d.compare(p, va, vb)
		}
	}
}

func (d *differ) compareArrays(path string, a, b []any) {
	for i := range max(len(a), len(b)) {
		p := path + "/" + strconv.Itoa(i)
		switch {
		case i >= len(a):
			d.add(Added, p, nil, b[i])
		case i >= len(b):
			d.add(Removed, p, a[i], nil)
		default:
			d.compare(p, a[i], b[i])
		}
	}
}

// add records a change. The side a change has no value on (a of an added
// value, b of a removed one) is ignored and left "", while a JSON null on
// the other side is shown as null.
func (d *differ) add(kind Kind, path string, a, b any) {
	c := Change{Kind: kind, Path: path}
	if kind != Added {
		c.Old = d.text(a)
	}
	if kind != Removed {
		c.New = d.text(b)
	}
	d.changes = append(d.changes, c)
}

// text is v as compact JSON, with <, > and & left as they are: the pages
// that show it escape HTML themselves.
func (d *differ) text(v any) string {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil && d.err == nil {
		d.err = fmt.Errorf("encode value: %w", err)
	}
	return strings.TrimSuffix(buf.String(), "\n")
}

// escape writes an object member name as a JSON Pointer token.
func escape(name string) string {
	return strings.ReplaceAll(strings.ReplaceAll(name, "~", "~0"), "/", "~1")
}
