package inspect

import (
	"sort"

	"github.com/tidwall/gjson"

	"github.com/lefia/edihub/internal/fingerprint"
)

// span is a byte range of the pretty-printed payload holding a key value.
type span struct {
	start, end int
	path       string
}

// mark cuts the pretty-printed payload into segments, marking the values
// that formed the fingerprint. Values are found again in the pretty text with
// the same gjson paths, which report where in the text a value sits; a value
// produced by a modifier (such as @flatten) has no place in the text and is
// only listed, not marked. Nothing is marked when the fingerprint fell back
// to the docnum, since the paths' values were not used then.
func mark(pretty string, key Key) []Segment {
	if key.Fallback != fingerprint.FallbackNone {
		return []Segment{{Text: pretty}}
	}
	var spans []span
	for _, v := range key.Values {
		if !v.Missing {
			spans = append(spans, locate(pretty, v.Path)...)
		}
	}
	sort.Slice(spans, func(i, j int) bool { return spans[i].start < spans[j].start })

	var segs []Segment
	at := 0
	for _, s := range spans {
		if s.start < at {
			continue // inside a value already marked, e.g. a path into a marked object
		}
		if s.start > at {
			segs = append(segs, Segment{Text: pretty[at:s.start]})
		}
		segs = append(segs, Segment{Text: pretty[s.start:s.end], Marked: true, Path: s.path})
		at = s.end
	}
	if at < len(pretty) {
		segs = append(segs, Segment{Text: pretty[at:]})
	}
	return segs
}

// locate returns where the value(s) at path sit in text: one place for a
// plain path, one per element for a query such as items.#.sku.
func locate(text, path string) []span {
	r := gjson.Get(text, path)
	if len(r.Indexes) > 0 {
		var spans []span
		for i, el := range r.Array() {
			if i < len(r.Indexes) {
				spans = append(spans, within(text, r.Indexes[i], el.Raw, path)...)
			}
		}
		return spans
	}
	return within(text, r.Index, r.Raw, path)
}

// within checks that raw really sits at index in text, since gjson reports
// index 0 for values it computed rather than found.
func within(text string, index int, raw, path string) []span {
	end := index + len(raw)
	if index <= 0 || raw == "" || end > len(text) || text[index:end] != raw {
		return nil
	}
	return []span{{start: index, end: end, path: path}}
}
