package messageview

import (
	"bytes"
	"unicode/utf8"

	"github.com/lefia/edihub/internal/jsonindent"
)

// MaxShownBytes bounds the text of a payload, and of the bytes a message
// arrived as, that a page shows; the rest is in the download. A whole
// payload of megabytes makes a page four times its size (indented, every
// quote escaped), held several times over while it is written
// (docs/performance.md, "Measurements behind the limits"). 256 KiB is some 6,000
// lines of indented JSON, more than anyone reads in a browser, and more
// than nearly every IDoc or webhook is whole (they are a few KiB to a few
// tens of KiB), so those still show entire; escaped, it makes at most about
// 1.3 MB of page.
const MaxShownBytes = 256 << 10

// PayloadView is a payload as a page shows it: pretty-printed (or as
// stored), cut where key values start and end, and no longer than
// MaxShownBytes.
type PayloadView struct {
	Segments []Segment
	// AsStored reports that the text is the payload as stored, not
	// indented: indenting it would have made it many times larger.
	AsStored bool
	// Bytes is the payload's size as stored.
	Bytes int
	// Cut reports that the text goes on past Segments: only its start is
	// shown. Marked values past the cut are HiddenMarks.
	Cut         bool
	HiddenMarks int
}

// View is payload as a page shows it, with nothing marked.
func View(payload []byte) PayloadView { return view(payload, nil) }

// view shows payload with the values at spans (in order, not overlapping)
// marked.
func view(payload []byte, spans []span) PayloadView {
	cuts := make([]int, 0, 2*len(spans))
	for _, s := range spans {
		cuts = append(cuts, s.Start, s.End)
	}
	text, indented := jsonindent.Indent(payload, cuts, MaxShownBytes)
	if !indented {
		text = jsonindent.Pretty{Head: payload[:min(len(payload), MaxShownBytes)], Size: len(payload), At: cuts}
	}
	shown := excerpt(text.Head, text.Size == len(text.Head))
	v := PayloadView{AsStored: !indented, Bytes: len(payload), Cut: len(shown) < text.Size}
	at := 0
	for i, s := range spans {
		start, end := text.At[2*i], min(text.At[2*i+1], len(shown))
		if start >= len(shown) {
			v.HiddenMarks++
			continue
		}
		if start > at {
			v.Segments = append(v.Segments, Segment{Text: string(shown[at:start])})
		}
		v.Segments = append(v.Segments, Segment{Text: string(shown[start:end]), Marked: true, Path: s.path})
		at = end
	}
	if at < len(shown) {
		v.Segments = append(v.Segments, Segment{Text: string(shown[at:])})
	}
	return v
}

// excerpt is the part of a text that a page shows, given head, the text's
// start: all of it when whole, else up to the end of its last line, or
// of its last whole character when that line is long (a payload shown as
// stored is one line).
func excerpt(head []byte, whole bool) []byte {
	if whole {
		return head
	}
	if nl := bytes.LastIndexByte(head, '\n'); nl >= len(head)/2 {
		return head[:nl+1]
	}
	last := len(head) - 1
	for last > 0 && !utf8.RuneStart(head[last]) {
		last--
	}
	if last >= 0 && !utf8.FullRune(head[last:]) {
		return head[:last]
	}
	return head
}
