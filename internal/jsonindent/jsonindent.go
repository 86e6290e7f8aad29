// Package jsonindent pretty-prints payloads for the admin pages within a
// bound. Indentation grows with depth: a payload nested 500 levels deep
// (the most ingest accepts) whose numbers each sit on a line of 1,000
// spaces would become hundreds of times its size, so a page that shows it
// indented could cost the server gigabytes. Indent stops at Limit, and the
// page shows the payload as stored instead.
package jsonindent

// indentUnit is what each level of nesting adds, as json.Indent(…, "", "  ").
const indentUnit = "  "

// Limit is the longest text Indent produces for a payload of n bytes.
func Limit(n int) int { return 4*n + 64<<10 }

// Pretty is the start of a payload's pretty-printed text.
type Pretty struct {
	// Head is the text's first bytes, at most the number asked for: a page
	// shows the start of a large payload, and holding the rest of its text
	// would cost memory for nothing.
	Head []byte
	Size int   // bytes of the whole text
	At   []int // where each cut lands in the whole text
}

// Indent pretty-prints the valid JSON raw exactly as json.Indent(dst, raw,
// "", "  ") does, keeping the first keep bytes of the text, and returns
// where each of cuts (ascending byte offsets into raw, each at the start or
// just past the end of a value) lands in the whole text. It gives up and
// returns ok false once the whole text would be longer than
// Limit(len(raw)).
func Indent(raw []byte, cuts []int, keep int) (p Pretty, ok bool) {
	return indent(raw, cuts, keep, Limit(len(raw)))
}

// text is the pretty text being written: its first keep bytes, and its
// length.
type text struct {
	head []byte
	keep int
	size int
}

func (t *text) write(b ...byte) {
	if room := t.keep - len(t.head); room > 0 {
		t.head = append(t.head, b[:min(room, len(b))]...)
	}
	t.size += len(b)
}

func (t *text) newline(depth int) {
	t.write('\n')
	for range depth {
		t.write(indentUnit[0], indentUnit[1])
	}
}

func indent(raw []byte, cuts []int, keep, limit int) (Pretty, bool) {
	out := text{head: make([]byte, 0, min(len(raw)+len(raw)/2, limit, keep)), keep: keep}
	at := make([]int, len(cuts))
	next, depth := 0, 0
	for i := 0; i < len(raw); i++ {
		for next < len(cuts) && cuts[next] <= i {
			at[next] = out.size
			next++
		}
		if out.size > limit {
			return Pretty{}, false
		}
		switch c := raw[i]; c {
		case ' ', '\t', '\n', '\r':
		case '"':
			end := stringEnd(raw, i)
			out.write(raw[i:end]...)
			i = end - 1
		case '{', '[':
			k := skipSpace(raw, i+1)
			if k < len(raw) && (raw[k] == '}' || raw[k] == ']') {
				out.write(c, raw[k])
				i = k
				break
			}
			out.write(c)
			depth++
			out.newline(depth)
		case '}', ']':
			depth--
			out.newline(depth)
			out.write(c)
		case ',':
			out.write(c)
			out.newline(depth)
		case ':':
			out.write(':', ' ')
		default:
			out.write(c)
		}
	}
	for ; next < len(cuts); next++ {
		at[next] = out.size
	}
	if out.size > limit {
		return Pretty{}, false
	}
	return Pretty{Head: out.head, Size: out.size, At: at}, true
}

// stringEnd returns the offset just past the string that starts at raw[i].
func stringEnd(raw []byte, i int) int {
	for j := i + 1; j < len(raw); j++ {
		switch raw[j] {
		case '\\':
			j++
		case '"':
			return j + 1
		}
	}
	return len(raw)
}

func skipSpace(raw []byte, i int) int {
	for i < len(raw) && (raw[i] == ' ' || raw[i] == '\t' || raw[i] == '\n' || raw[i] == '\r') {
		i++
	}
	return i
}
