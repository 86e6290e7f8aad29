package envelope

import (
	"slices"
	"unsafe"

	"github.com/tidwall/gjson"

	"github.com/lefia/edihub/internal/apperr"
)

// containerEnds is where each container of a body opened with fewer than
// levels containers around it ends, noted while check reads the body. An
// envelope's members are then read without reading their values again: a
// batch item's payload is most of its bytes, and gjson finds a container's
// end by scanning it, once for the batch's array and once more for the
// item's members.
type containerEnds struct {
	levels int
	starts []int // the offsets of the opening brackets, in the body's order
	ends   []int // the offsets just past the matching closing brackets
	open   []int // indexes into starts of the noted containers still open
}

// opened notes the container whose bracket is at i, with open containers
// around it. A nil receiver notes nothing.
func (e *containerEnds) opened(open, i int) {
	if e == nil || open >= e.levels {
		return
	}
	e.open = append(e.open, len(e.starts))
	e.starts = append(e.starts, i)
	e.ends = append(e.ends, 0)
}

// closed notes that the container with open containers around it ended just
// before i.
func (e *containerEnds) closed(open, i int) {
	if e == nil || open >= e.levels {
		return
	}
	last := len(e.open) - 1
	e.ends[e.open[last]] = i
	e.open = e.open[:last]
}

// end is the offset just past the container whose bracket is at start.
func (e *containerEnds) end(start int) int {
	k, _ := slices.BinarySearch(e.starts, start)
	return e.ends[k]
}

// shallow reads the outermost levels of a body that check accepted while
// noting their containers' ends. Since the body is valid JSON, it only
// looks for where each member and element begins and ends.
type shallow struct {
	body []byte
	ends *containerEnds
}

// checkShallow checks body as CheckJSON does and returns a reader of its
// outermost levels: those around a value with levels-1 containers around it.
func checkShallow(body []byte, levels int) (shallow, error) {
	ends := &containerEnds{levels: levels}
	err := check(body, ends)
	return shallow{body: body, ends: ends}, err
}

func (s shallow) skipSpace(i int) int {
	for i < len(s.body) && isSpace(s.body[i]) {
		i++
	}
	return i
}

// valueEnd is the offset just past the value that starts at i.
func (s shallow) valueEnd(i int) int {
	switch s.body[i] {
	case '{', '[':
		return s.ends.end(i)
	case '"':
		return stringEnd(s.body, i+1)
	case 't', 'n':
		return i + len("true")
	case 'f':
		return i + len("false")
	}
	return numberEnd(s.body, i)
}

// value is the value at body[start:end] as gjson reads it, with its offset.
// A container is left unread: only its bytes are needed.
func (s shallow) value(start, end int) gjson.Result {
	raw := unsafe.String(&s.body[start], end-start)
	r := gjson.Result{Type: gjson.JSON, Raw: raw}
	if c := s.body[start]; c != '{' && c != '[' {
		r = gjson.Parse(raw)
	}
	r.Index = start
	return r
}

// members returns the members of the object whose brace is at start by
// name; a name that appears twice is refused rather than guessing which one
// counts. The names are views of the body, like gjson's.
func (s shallow) members(start int) (map[string]gjson.Result, error) {
	members := map[string]gjson.Result{}
	i := s.skipSpace(start + 1)
	if s.body[i] == '}' {
		return members, nil
	}
	for {
		nameEnd := stringEnd(s.body, i+1)
		name := s.name(i, nameEnd)
		valueStart := s.skipSpace(s.skipSpace(nameEnd) + 1) // past the colon
		valueEnd := s.valueEnd(valueStart)
		if _, seen := members[name]; seen {
			return nil, apperr.New(apperr.Invalid, "malformed-json", "the member %q appears twice in the body", name)
		}
		members[name] = s.value(valueStart, valueEnd)
		i = s.skipSpace(valueEnd)
		if s.body[i] == '}' {
			return members, nil
		}
		i = s.skipSpace(i + 1) // past the comma
	}
}

// name is the text of the member name body[start:end], quotes included. A
// name with an escape is decoded as gjson decodes it, so that it is matched
// as before.
func (s shallow) name(start, end int) string {
	raw := s.body[start:end]
	if slices.Contains(raw, '\\') {
		return gjson.ParseBytes(raw).Str
	}
	return unsafe.String(&s.body[start+1], end-start-2)
}

// elements returns where each element of the array whose bracket is at start
// begins.
func (s shallow) elements(start int) (starts []int) {
	i := s.skipSpace(start + 1)
	if s.body[i] == ']' {
		return nil
	}
	for {
		starts = append(starts, i)
		i = s.skipSpace(s.valueEnd(i))
		if s.body[i] == ']' {
			return starts
		}
		i = s.skipSpace(i + 1) // past the comma
	}
}
