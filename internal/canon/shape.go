package canon

import (
	"bytes"
	"crypto/sha256"
	"slices"
)

// ShapeHash returns the SHA-256 of the shape form of a canonical document
// (the output of Canonicalise) whose own SHA-256, its content hash, is
// contentHash. A document that is its own shape form, as most are, gets
// contentHash back without a second hashing.
//
// The shape form reads a one-item array whose item is an object as that
// object: {"E1EDK02":[{"QUALF":"001"}]} becomes {"E1EDK02":{"QUALF":"001"}}.
// XML-to-JSON converters write a segment that occurs once either way (an
// object, or an array of one), and the key paths an admin is offered read
// both alike ([path]|@flatten), so two payloads with the same shape form
// say the same thing. The rule looks at each array as it was received: an
// array of one array is kept, though the inner array may lose its own
// brackets; arrays of any other length, and one-item arrays of a string,
// number, boolean or null, are kept as they are, because a path reads the
// item of those differently from the item itself.
//
// Removing brackets keeps the form canonical: member names and their order
// are untouched, and so are all values.
func ShapeHash(canonical []byte, contentHash [32]byte) (hash [32]byte) {
	drop := oneObjectArrays(canonical)
	if len(drop) == 0 {
		return contentHash
	}
	h := sha256.New()
	start := 0
	for _, i := range drop {
		h.Write(canonical[start:i])
		start = i + 1
	}
	h.Write(canonical[start:])
	h.Sum(hash[:0])
	return hash
}

// oneObjectArrays returns, in increasing order, the offsets of the opening
// and closing bracket of every one-item array of an object in the canonical
// document doc. Canonical JSON has no whitespace, so an array's first item
// starts right after its bracket, and it has one item exactly when no comma
// appears at its own level.
func oneObjectArrays(doc []byte) []int {
	if !bytes.Contains(doc, []byte("[{")) {
		return nil // the common case costs one scan and no allocation
	}
	type frame struct {
		open      int  // offset of the opening bracket
		array     bool // an array, not an object
		oneObject bool // an array whose first item is an object, with no second item so far
	}
	var stack []frame
	var drop []int
	for i := 0; i < len(doc); i++ {
		switch doc[i] {
		case '"':
			// Skip the string; canonical strings escape only with a
			// backslash, and a backslash never ends one.
			for i++; i < len(doc) && doc[i] != '"'; i++ {
				if doc[i] == '\\' {
					i++
				}
			}
		case '{':
			stack = append(stack, frame{open: i})
		case '[':
			stack = append(stack, frame{open: i, array: true, oneObject: i+1 < len(doc) && doc[i+1] == '{'})
		case ',':
			if n := len(stack); n > 0 {
				stack[n-1].oneObject = false
			}
		case '}', ']':
			n := len(stack)
			if n == 0 {
				return nil // not canonical JSON; callers pass only canonical forms
			}
			if f := stack[n-1]; f.array && f.oneObject {
				drop = append(drop, f.open, i)
			}
			stack = stack[:n-1]
		}
	}
	// Brackets were recorded as their arrays closed, inner ones first.
	slices.Sort(drop)
	return drop
}
