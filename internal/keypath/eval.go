package keypath

import (
	"fmt"

	"github.com/tidwall/gjson"
)

// LimitError says that what a path yields on one payload exceeds a limit of
// evaluation.
type LimitError struct {
	Limit  string // "value size" or "elements"
	Detail string
}

func (e *LimitError) Error() string { return e.Detail }

// Span is where a value a path yields sits in the payload, as byte offsets.
type Span struct{ Start, End int }

// Get evaluates p on payload, which must be valid JSON, and refuses a value
// larger than MaxValueBytes or an array of more than MaxElements elements.
// The grammar bounds the work of the evaluation itself (see Cost).
func (p Path) Get(payload []byte) (gjson.Result, error) {
	r := gjson.GetBytes(payload, p.text)
	if len(r.Raw) > MaxValueBytes {
		return gjson.Result{}, &LimitError{Limit: "value size", Detail: fmt.Sprintf(
			"the value is %d bytes; a key value may be at most %d bytes", len(r.Raw), MaxValueBytes)}
	}
	if r.IsArray() {
		n := 0
		r.ForEach(func(_, _ gjson.Result) bool {
			n++
			return n <= MaxElements
		})
		if n > MaxElements {
			return gjson.Result{}, &LimitError{Limit: "elements", Detail: fmt.Sprintf(
				"the value is an array of more than %d elements, the most a key value may have", MaxElements)}
		}
	}
	return r, nil
}

// Spans returns where the value r, which p.Get returned for payload, sits
// in payload: one span for a plain path, one per element for a fan-out such
// as items.#.sku, none for a value computed by a multipath or a modifier,
// which has no place in the payload.
func Spans(payload []byte, r gjson.Result) []Span {
	if len(r.Indexes) > 0 {
		var spans []Span
		for i, el := range r.Array() {
			if i < len(r.Indexes) {
				spans = append(spans, within(payload, r.Indexes[i], el.Raw)...)
			}
		}
		return spans
	}
	return within(payload, r.Index, r.Raw)
}

// within checks that raw really sits at index in payload, since gjson
// reports index 0 for values it computed rather than found.
func within(payload []byte, index int, raw string) []Span {
	end := index + len(raw)
	if index <= 0 || raw == "" || end > len(payload) || string(payload[index:end]) != raw {
		return nil
	}
	return []Span{{Start: index, End: end}}
}
