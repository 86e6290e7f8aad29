package fingerprint

import (
	"encoding/json"
	"fmt"

	"github.com/tidwall/gjson"

	"github.com/lefia/edihub/internal/canon"
	"github.com/lefia/edihub/internal/keypath"
)

// null is how a missing value enters the array. SPEC.md makes a missing
// path, JSON null and "" all the same null, so that a sender that omits a
// field and one that sends it empty are treated alike.
const null = "null"

// extract reads path from payload and returns the value as it enters the
// fingerprint array, following SPEC.md: scalars become JSON strings so that
// 6149 and "6149" match, and objects and arrays stay JSON in canonical form
// so that member order and whitespace do not matter. The path was accepted
// by package keypath, whose evaluation also refuses a value beyond its
// limits, so that the work stays bounded.
func extract(payload []byte, path keypath.Path) (Value, error) {
	r, err := path.Get(payload)
	if err != nil {
		return Value{}, err
	}
	v := Value{Path: path.String()}
	switch r.Type {
	case gjson.Null:
		// gjson reports a missing path and a JSON null alike.
		v.JSON, v.Missing = null, true
	case gjson.String:
		if r.Str == "" {
			v.JSON, v.Missing = null, true
			break
		}
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
	if !v.Missing {
		v.Spans = keypath.Spans(payload, r)
	}
	return v, nil
}

// Text is the value as a person would write it to search for it: a string
// as it is, a number in its canonical form (6149.0 is "6149"), true and
// false as words, an object or array as its canonical JSON; "" when the
// value is missing.
func (v Value) Text() string {
	if v.Missing {
		return ""
	}
	var s string
	if err := json.Unmarshal([]byte(v.JSON), &s); err == nil {
		return s
	}
	return v.JSON
}
