package fingerprint

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/tidwall/gjson"

	"github.com/lefia/edihub/internal/canon"
	"github.com/lefia/edihub/internal/keypath"
)

// null is how a missing value enters the array. SPEC.md makes a missing
// path and every value that carries no business identity the same null, so
// that a sender that omits a field and one that sends it empty are treated
// alike, and so that a path matching nothing in many documents does not give
// them all one fingerprint.
const null = "null"

// extract reads path from payload and returns the value as it enters the
// fingerprint array, following SPEC.md: a value without identity (see
// carriesNoValue) is null, scalars become JSON strings so that 6149 and
// "6149" match, and objects and arrays stay JSON in canonical form so that
// member order and whitespace do not matter. The path was accepted by
// package keypath, whose evaluation also refuses a value beyond its limits,
// so that the work stays bounded.
func extract(payload []byte, path keypath.Path) (Value, error) {
	r, err := path.Get(payload)
	if err != nil {
		return Value{}, err
	}
	v := Value{Path: path.String()}
	if carriesNoValue(r) {
		v.JSON, v.Missing = null, true
		if r.Type != gjson.Null {
			v.Found = r.Raw
		}
		return v, nil
	}
	switch r.Type {
	case gjson.String:
		v.JSON = string(canon.AppendString(nil, r.Str))
	case gjson.Number:
		// gjson keeps the literal as written in Raw; JCS turns it into the
		// ECMAScript form, so 6149, 6149.0 and 6.149e3 all become "6149".
		n, err := canon.JSON([]byte(r.Raw))
		if err != nil {
			return Value{}, fmt.Errorf("canonicalise number: %w", err)
		}
		v.JSON = `"` + string(n) + `"`
	case gjson.True:
		v.JSON = `"true"`
	case gjson.False:
		v.JSON = `"false"`
	default:
		// gjson.JSON, the only type left: an object or an array, which may
		// also be the output of a modifier such as @flatten.
		c, err := canon.JSON([]byte(r.Raw))
		if err != nil {
			return Value{}, fmt.Errorf("canonicalise value: %w", err)
		}
		v.JSON = string(c)
	}
	v.Spans = keypath.Spans(payload, r)
	return v, nil
}

// carriesNoValue reports whether r holds nothing that could identify a
// business document: a missing path or JSON null (gjson reports both as
// Null), the empty string, or an array or object all of whose elements or
// members carry no value, which includes [] and {}. A multipath or a
// fan-out such as items.#.sku that matches nothing yields [], and
// [null,null] or {"BELNR":""} say no more; had they been values, every
// document lacking the field would share one fingerprint with the first and
// be answered as its duplicate. A blank string such as " ", a zero and
// false are values: a sender wrote them. The value is within
// keypath.MaxValueBytes, which bounds the walk.
func carriesNoValue(r gjson.Result) bool {
	switch r.Type {
	case gjson.Null:
		return true
	case gjson.String:
		return r.Str == ""
	case gjson.JSON:
		empty := true
		r.ForEach(func(_, el gjson.Result) bool {
			empty = carriesNoValue(el)
			return empty
		})
		return empty
	}
	return false
}

// Text is the value as a person would write it to search for it: a string
// as it is, a number in its canonical form (6149.0 is "6149"), true and
// false as words, an object or array as its canonical JSON; "" when the
// value is missing.
func (v Value) Text() string {
	if v.Missing {
		return ""
	}
	// A string without escapes, as nearly every key is, is its text
	// between the quotes.
	if n := len(v.JSON); n >= 2 && v.JSON[0] == '"' && v.JSON[n-1] == '"' && strings.IndexByte(v.JSON, '\\') < 0 {
		return v.JSON[1 : n-1]
	}
	var s string
	if err := json.Unmarshal([]byte(v.JSON), &s); err == nil {
		return s
	}
	return v.JSON
}
