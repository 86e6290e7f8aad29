package keypath

import (
	"cmp"
	"fmt"
	"strings"
	"unsafe"

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
	// gjson reads strings; a view of the payload spares copying it, and the
	// value is copied only once it is known to be within the limits.
	view := unsafe.String(unsafe.SliceData(payload), len(payload))
	var r gjson.Result
	if len(p.chains) > 0 {
		var err error
		if r, err = p.getMultipath(view); err != nil {
			return gjson.Result{}, err
		}
	} else {
		r = gjson.Get(view, p.text)
	}
	if err := checkLimits(r); err != nil {
		return gjson.Result{}, err
	}
	r.Raw, r.Str = strings.Clone(r.Raw), strings.Clone(r.Str)
	return r, nil
}

// getMultipath evaluates a path that starts with a multipath as gjson does,
// an array of the chains' values followed by the rest of the path, except
// that each chain's value must be within MaxValueBytes before it is copied
// into the array. So the stages after the multipath read at most
// MaxMultipath values of MaxValueBytes, however large the payload: without
// this, [items,items,items,items] would copy the whole payload four times
// and every later stage would read all four copies.
func (p Path) getMultipath(view string) (gjson.Result, error) {
	// Every chain's value is checked before anything is copied, and the
	// array is then written into one buffer of its exact size: grown by
	// appends, it would allocate up to twice its size again, beyond what
	// Cost promises.
	values := make([]string, 0, len(p.chains))
	size := len("[]")
	for i, chain := range p.chains {
		res := gjson.Get(view, chain)
		if !res.Exists() {
			continue
		}
		raw := res.Raw
		if raw == "" {
			raw = cmp.Or(res.String(), "null")
		}
		if len(raw) > MaxValueBytes {
			return gjson.Result{}, &LimitError{Limit: "value size", Detail: fmt.Sprintf(
				"path %d of the multipath selects %d bytes; a key value may be at most %d bytes", i+1, len(raw), MaxValueBytes)}
		}
		values = append(values, raw)
		size += len(raw) + len(",")
	}
	b := make([]byte, 0, size)
	b = append(b, '[')
	for i, raw := range values {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, raw...)
	}
	b = append(b, ']')
	// b is never written again, so the array may be read in place; Get
	// copies the value it returns.
	r := gjson.Result{Type: gjson.JSON, Raw: unsafe.String(unsafe.SliceData(b), len(b))}
	if p.rest != "" {
		r = r.Get(p.rest)
	}
	// Places within the array are not places in the payload.
	r.Index, r.Indexes = 0, nil
	return r, nil
}

// checkLimits refuses a value beyond MaxValueBytes or MaxElements.
func checkLimits(r gjson.Result) error {
	if len(r.Raw) > MaxValueBytes {
		return &LimitError{Limit: "value size", Detail: fmt.Sprintf(
			"the value is %d bytes; a key value may be at most %d bytes", len(r.Raw), MaxValueBytes)}
	}
	if r.IsArray() {
		n := 0
		r.ForEach(func(_, _ gjson.Result) bool {
			n++
			return n <= MaxElements
		})
		if n > MaxElements {
			return &LimitError{Limit: "elements", Detail: fmt.Sprintf(
				"the value is an array of more than %d elements, the most a key value may have", MaxElements)}
		}
	}
	return nil
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
