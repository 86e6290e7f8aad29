package idocxml

import (
	"bytes"
	"fmt"
	"slices"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/lefia/edihub/internal/canon"
)

// writeView returns the JSON view {"<root>": {"IDOC": {...}}} of the IDOC
// element just read (see the package comment) twice: in document order,
// the view stored and shown, and in its RFC 8785 canonical form, the
// bytes its hashes are taken from, written here at the cost of a second
// pass over the element rather than by canonicalising the first, which
// costs several times more (docs/performance.md, "The canonical form of an
// IDoc's view"). Each is written straight into a buffer reused from one
// IDoc to the next, with jsontext's quoting, which is RFC 8785's; every
// member name is unique by construction (attributes are checked when
// read; children are grouped by name).
func (p *parser) writeView(root string) (view, canonical []byte, err error) {
	if p.view, err = p.writeRoot(p.view[:0], root, false); err != nil {
		return nil, nil, err
	}
	// The canonical form holds the view's members in another order, and so
	// has its length: its buffer is sized once, rather than grown.
	if p.canonical, err = p.writeRoot(slices.Grow(p.canonical[:0], len(p.view)), root, true); err != nil {
		return nil, nil, err
	}
	return bytes.Clone(p.view), bytes.Clone(p.canonical), nil
}

// writeRoot appends the view of the IDOC element to b, its members in
// canonical order when sorted is true, else in document order.
func (p *parser) writeRoot(b []byte, root string, sorted bool) ([]byte, error) {
	b = append(b, '{')
	b, err := jsontext.AppendQuote(b, root)
	if err != nil {
		return nil, fmt.Errorf("write view: %w", err)
	}
	b = append(b, ":{"...)
	if b, err = jsontext.AppendQuote(b, p.nodes[0].name); err != nil {
		return nil, fmt.Errorf("write view: %w", err)
	}
	b = append(b, ':')
	if b, err = p.writeNode(b, 0, sorted); err != nil {
		return nil, err
	}
	return append(b, "}}"...), nil
}

// member is a member of an element's view: an attribute (child 0, name
// "@" and its local name) or the group of the children of one name (child
// is the first of them).
type member struct {
	name  string
	attr  int32
	child int32
}

// writeNode appends node i's value: its text when it is a leaf, else an
// object of its attributes and children, siblings of one name grouped in
// one array at the place of the first, the members in document order or,
// when sorted, in canonical order (canon.CompareNames). An element with
// both text and children or attributes has no view under this convention,
// and is refused rather than losing the text. The pass in document order
// groups the children of each element (group), and the canonical pass,
// which follows it, finds them grouped.
func (p *parser) writeNode(b []byte, i int32, sorted bool) ([]byte, error) {
	n := &p.nodes[i]
	if n.leaf() {
		return jsontext.AppendQuote(b, p.textOf(i))
	}
	if n.textAfter || len(bytes.TrimSpace(p.textOf(i))) > 0 {
		return nil, fmt.Errorf("element %s holds text beside child elements or attributes", n.name)
	}
	if !sorted {
		p.group(i)
	}
	// The members are listed on a stack shared with the nested calls,
	// which push theirs above and take them off before returning.
	first := len(p.members)
	defer func() { p.members = p.members[:first] }()
	for k := n.attrStart; k < n.attrEnd; k++ {
		p.members = append(p.members, member{name: p.attrName(p.attrs[k].Name.Local), attr: k})
	}
	for c := n.firstChild; c != 0; c = p.nodes[c].next {
		if p.nodes[c].groupHead {
			p.members = append(p.members, member{name: p.nodes[c].name, child: c})
		}
	}
	if sorted {
		slices.SortFunc(p.members[first:], func(a, b member) int { return canon.CompareNames(a.name, b.name) })
	}
	b = append(b, '{')
	var err error
	for k := first; k < len(p.members); k++ {
		m := p.members[k]
		if k > first {
			b = append(b, ',')
		}
		if b, err = jsontext.AppendQuote(b, m.name); err != nil {
			return nil, err
		}
		b = append(b, ':')
		if m.child == 0 {
			if b, err = jsontext.AppendQuote(b, p.attrs[m.attr].Value); err != nil {
				return nil, err
			}
			continue
		}
		if b, err = p.writeGroup(b, m.child, sorted); err != nil {
			return nil, err
		}
	}
	return append(b, '}'), nil
}

// writeGroup appends the value of the children of one name whose first is
// c: that child's own, or an array of each one's in document order.
func (p *parser) writeGroup(b []byte, c int32, sorted bool) ([]byte, error) {
	if p.nodes[c].nextSame == 0 {
		return p.writeNode(b, c, sorted)
	}
	b = append(b, '[')
	var err error
	for s := c; s != 0; s = p.nodes[s].nextSame {
		if s != c {
			b = append(b, ',')
		}
		if b, err = p.writeNode(b, s, sorted); err != nil {
			return nil, err
		}
	}
	return append(b, ']'), nil
}

// attrName is an attribute's member name, "@" and its local name, made
// once per name and document.
func (p *parser) attrName(local string) string {
	name, ok := p.attrNames[local]
	if !ok {
		if p.attrNames == nil {
			p.attrNames = make(map[string]string)
		}
		name = "@" + local
		p.attrNames[local] = name
	}
	return name
}

// fewNames is how many distinct names among siblings are looked up by
// scanning before a map is worth its cost.
const fewNames = 8

// group links the children of node i into groups of one name, in the order
// each name first occurs: the first of each is its groupHead, and nextSame
// leads through the rest in document order.
func (p *parser) group(i int32) {
	var tails [fewNames]int32 // the last child of each name so far, while there are few names
	names, many := 0, false
	for c := p.nodes[i].firstChild; c != 0; c = p.nodes[c].next {
		child := &p.nodes[c]
		child.nextSame, child.groupHead = 0, false
		if !many {
			k := 0
			for k < names && p.nodes[tails[k]].name != child.name {
				k++
			}
			switch {
			case k < names:
				p.nodes[tails[k]].nextSame = c
				tails[k] = c
				continue
			case names < fewNames:
				tails[names] = c
				names++
				child.groupHead = true
				continue
			}
			many = true
			if p.index == nil {
				p.index = make(map[string]int32)
			}
			clear(p.index)
			for _, t := range tails {
				p.index[p.nodes[t].name] = t
			}
		}
		if tail, seen := p.index[child.name]; seen {
			p.nodes[tail].nextSame = c
		} else {
			child.groupHead = true
		}
		p.index[child.name] = c
	}
}
