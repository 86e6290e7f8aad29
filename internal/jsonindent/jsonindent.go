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

// Indent pretty-prints the valid JSON raw exactly as json.Indent(dst, raw,
// "", "  ") does, and returns where each of cuts (ascending byte offsets
// into raw, each at the start or just past the end of a value) lands in the
// pretty text. It gives up and returns ok false once the text would be
// longer than Limit(len(raw)).
func Indent(raw []byte, cuts []int) (pretty []byte, at []int, ok bool) {
	return indent(raw, cuts, Limit(len(raw)))
}

func indent(raw []byte, cuts []int, limit int) (pretty []byte, at []int, ok bool) {
	out := make([]byte, 0, min(len(raw)+len(raw)/2, limit))
	at = make([]int, len(cuts))
	next, depth := 0, 0
	newline := func() {
		out = append(out, '\n')
		for range depth {
			out = append(out, indentUnit...)
		}
	}
	for i := 0; i < len(raw); i++ {
		for next < len(cuts) && cuts[next] <= i {
			at[next] = len(out)
			next++
		}
		if len(out) > limit {
			return nil, nil, false
		}
		switch c := raw[i]; c {
		case ' ', '\t', '\n', '\r':
		case '"':
			end := stringEnd(raw, i)
			out = append(out, raw[i:end]...)
			i = end - 1
		case '{', '[':
			k := skipSpace(raw, i+1)
			if k < len(raw) && (raw[k] == '}' || raw[k] == ']') {
				out = append(out, c, raw[k])
				i = k
				break
			}
			out = append(out, c)
			depth++
			newline()
		case '}', ']':
			depth--
			newline()
			out = append(out, c)
		case ',':
			out = append(out, c)
			newline()
		case ':':
			out = append(out, ':', ' ')
		default:
			out = append(out, c)
		}
	}
	for ; next < len(cuts); next++ {
		at[next] = len(out)
	}
	if len(out) > limit {
		return nil, nil, false
	}
	return out, at, true
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
