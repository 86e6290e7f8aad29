package messageview

import (
	"sort"

	"github.com/lefia/edihub/internal/fingerprint"
	"github.com/lefia/edihub/internal/keypath"
)

// span is a byte range of the stored payload holding a key value.
type span struct {
	keypath.Span
	path string
}

// mark shows the payload, pretty-printed, marking the values that formed
// the fingerprint. The paths are evaluated once, on the stored payload, by
// fingerprint.Compute, which reports where each value sits (Value.Spans);
// those places are carried through the indentation, so no path is
// evaluated again on the pretty text. A value produced by a modifier (such
// as @flatten) has no place in the payload and is only listed, not marked.
// Nothing is marked when the fingerprint fell back to the docnum, since the
// paths' values were not used then.
func mark(payload []byte, key Key) PayloadView {
	var spans []span
	if key.Fallback == fingerprint.FallbackNone {
		for _, v := range key.Values {
			for _, s := range v.Spans {
				spans = append(spans, span{Span: s, path: v.Path})
			}
		}
	}
	sort.SliceStable(spans, func(i, j int) bool { return spans[i].Start < spans[j].Start })
	kept := spans[:0]
	at := 0
	for _, s := range spans {
		if s.Start < at {
			continue // inside a value already marked, e.g. a path into a marked object
		}
		kept = append(kept, s)
		at = s.End
	}
	return view(payload, kept)
}
