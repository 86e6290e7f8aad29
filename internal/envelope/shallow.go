package envelope

import (
	"math"
	"slices"
	"unsafe"

	"github.com/tidwall/gjson"

	"github.com/lefia/edihub/internal/apperr"
)

// containerEnds is where the containers of a body that are opened with
// fewer than levels containers around it end, noted while check reads the
// body. An envelope's members are then read without reading their values
// again: a batch item's payload is most of its bytes, and gjson found a
// container's end by scanning it, once for the batch's array and once more
// for the item's members.
//
// Only a container longer than minNoted bytes is noted: the containers
// noted at one level are apart, so each level's notes take at most 8 bytes
// for every minNoted of the body, and all of them at most a sixteenth of
// it whatever its shape (a body of "[]," would otherwise take 8 bytes of
// notes for every 3 of its own). A shorter container is found again by
// skipContainer, which costs little for so few bytes.
type containerEnds struct {
	levels int
	open   [maxNotedLevels]int32 // the opening brackets of the containers open at those levels
	noted  []span                // by where they open, once check has returned
}

const (
	maxNotedLevels = 4
	minNoted       = 512
)

type span struct{ start, end int32 }

// opened notes the container whose bracket is at i, with open containers
// around it. A nil receiver notes nothing.
func (e *containerEnds) opened(open, i int) {
	if e != nil && open < e.levels {
		e.open[open] = int32(i)
	}
}

// closed notes that the container with open containers around it ended just
// before i.
func (e *containerEnds) closed(open, i int) {
	if e != nil && open < e.levels && i-int(e.open[open]) > minNoted {
		e.noted = append(e.noted, span{e.open[open], int32(i)})
	}
}

// end is the offset just past the container whose bracket is at start, if
// it was noted.
func (e *containerEnds) end(start int) (int, bool) {
	k, found := slices.BinarySearchFunc(e.noted, int32(start), func(s span, start int32) int { return int(s.start - start) })
	if !found {
		return 0, false
	}
	return int(e.noted[k].end), true
}

// skipContainer is the offset just past the container whose bracket is at
// i in a body that check accepted.
func skipContainer(body []byte, i int) int {
	depth := 0
	for ; ; i++ {
		switch body[i] {
		case '"':
			i = closingQuote(body, i+1)
		case '{', '[':
			depth++
		case '}', ']':
			if depth--; depth == 0 {
				return i + 1
			}
		}
	}
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
	if len(body) > math.MaxInt32 {
		// The notes hold 32-bit offsets; no body is allowed near this size.
		return shallow{}, apperr.New(apperr.TooLarge, "payload-too-large", "the body is larger than 2 GiB")
	}
	ends := &containerEnds{levels: levels}
	err := check(body, ends)
	// Containers close inner first; they are looked up by where they open.
	slices.SortFunc(ends.noted, func(a, b span) int { return int(a.start - b.start) })
	return shallow{body: body, ends: ends}, err
}

func (s shallow) skipSpace(i int) int {
	return skipSpace(s.body, i)
}

// valueEnd is the offset just past the value that starts at i. The body is
// valid, so a string ends at its first unescaped quote.
func (s shallow) valueEnd(i int) int {
	switch s.body[i] {
	case '{', '[':
		if end, noted := s.ends.end(i); noted {
			return end
		}
		return skipContainer(s.body, i)
	case '"':
		return closingQuote(s.body, i+1) + 1
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

// object returns the members of the object at start by name; a value that
// is no object, or a name that appears twice, is refused rather than
// guessing which one counts. The names are views of the body, like gjson's.
func (s shallow) object(start int) (map[string]gjson.Result, error) {
	if s.body[start] != '{' {
		return nil, apperr.New(apperr.Invalid, "malformed-json", "the body must be a JSON object")
	}
	members := map[string]gjson.Result{}
	i := s.skipSpace(start + 1)
	if s.body[i] == '}' {
		return members, nil
	}
	for {
		nameEnd := s.valueEnd(i)
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
// begins, up to max+1 of them: enough to refuse an array longer than max
// without holding its every offset.
func (s shallow) elements(start, max int) (starts []int) {
	i := s.skipSpace(start + 1)
	if s.body[i] == ']' {
		return nil
	}
	for {
		starts = append(starts, i)
		if len(starts) > max {
			return starts
		}
		i = s.skipSpace(s.valueEnd(i))
		if s.body[i] == ']' {
			return starts
		}
		i = s.skipSpace(i + 1) // past the comma
	}
}
