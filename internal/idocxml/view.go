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
// bytes its hashes are taken from. The view is written first, with
// jsontext's quoting, which is RFC 8785's, into a buffer reused from one
// IDoc to the next; every member name is unique by construction
// (attributes are checked when read; children are grouped by name). The
// canonical form is then put together from the view's own bytes, each
// member and each value already quoted, its objects' members in canonical
// order: writing it anew cost about as much as the view, and
// canonicalising the view several times more (docs/performance.md, "The
// canonical form of an IDoc's view"). It has the view's length, so both
// share one piece of p.views of twice the view's size.
func (p *parser) writeView(root string) (view, canonical []byte, err error) {
	p.view = append(p.view[:0], '{')
	if p.view, err = jsontext.AppendQuote(p.view, root); err != nil {
		return nil, nil, fmt.Errorf("write view: %w", err)
	}
	p.view = append(p.view, ":{"...)
	if p.view, err = jsontext.AppendQuote(p.view, p.nodes[0].name); err != nil {
		return nil, nil, fmt.Errorf("write view: %w", err)
	}
	p.view = append(p.view, ':')
	p.attrViews = slices.Grow(p.attrViews[:0], len(p.attrs))[:len(p.attrs)]
	if p.view, err = p.writeNode(p.view, 0); err != nil {
		return nil, nil, err
	}
	p.view = append(p.view, "}}"...)

	both := append(p.views.Take(2*len(p.view)), p.view...)
	n := len(both)
	// The root and IDOC members are the only ones of their objects, and
	// so in canonical order already.
	canonical = append(both[n:n], p.view[:p.nodes[0].viewStart]...)
	canonical = p.writeCanonical(canonical, 0)
	return both[:n:n], append(canonical, "}}"...), nil
}

// writeNode appends node i's value to the view b: its text when it is a
// leaf, else an object of its attributes and children, siblings of one
// name grouped in one array at the place of the first, the members in
// document order. An element with both text and children or attributes
// has no view under this convention, and is refused rather than losing
// the text. It records where each value and member was written, and
// whether the value is in canonical order as written (node.canonical),
// for writeCanonical.
func (p *parser) writeNode(b []byte, i int32) ([]byte, error) {
	n := &p.nodes[i]
	n.viewStart = int32(len(b))
	if n.leaf() {
		b, err := jsontext.AppendQuote(b, p.textOf(i))
		n.viewEnd, n.canonical = int32(len(b)), true
		return b, err
	}
	if n.textAfter || len(bytes.TrimSpace(p.textOf(i))) > 0 {
		return nil, fmt.Errorf("element %s holds text beside child elements or attributes", n.name)
	}
	p.group(i)
	// The object is in canonical order when each member's name sorts
	// after the one before it, and each child's value is.
	canonical, previous := true, ""
	inOrder := func(name string) {
		canonical = canonical && (previous == "" || canon.CompareNames(previous, name) < 0)
		previous = name
	}
	b = append(b, '{')
	var err error
	for k := n.attrStart; k < n.attrEnd; k++ {
		name := p.attrName(p.attrs[k].Name.Local)
		inOrder(name)
		if len(b) > int(n.viewStart)+1 {
			b = append(b, ',')
		}
		start := len(b)
		if b, err = jsontext.AppendQuote(b, name); err != nil {
			return nil, err
		}
		b = append(b, ':')
		if b, err = jsontext.AppendQuote(b, p.attrs[k].Value); err != nil {
			return nil, err
		}
		p.attrViews[k] = span{int32(start), int32(len(b))}
	}
	for c := n.firstChild; c != 0; c = p.nodes[c].next {
		head := &p.nodes[c]
		if !head.groupHead {
			continue
		}
		inOrder(head.name)
		if len(b) > int(n.viewStart)+1 {
			b = append(b, ',')
		}
		head.memberStart = int32(len(b))
		if b, err = jsontext.AppendQuote(b, head.name); err != nil {
			return nil, err
		}
		b = append(b, ':')
		if b, err = p.writeGroup(b, c); err != nil {
			return nil, err
		}
		for s := c; s != 0 && canonical; s = p.nodes[s].nextSame {
			canonical = p.nodes[s].canonical
		}
	}
	b = append(b, '}')
	n.viewEnd, n.canonical = int32(len(b)), canonical
	return b, nil
}

// writeGroup appends the value of the children of one name whose first is
// c: that child's own, or an array of each one's in document order.
func (p *parser) writeGroup(b []byte, c int32) ([]byte, error) {
	if p.nodes[c].nextSame == 0 {
		return p.writeNode(b, c)
	}
	b = append(b, '[')
	var err error
	for s := c; s != 0; s = p.nodes[s].nextSame {
		if s != c {
			b = append(b, ',')
		}
		if b, err = p.writeNode(b, s); err != nil {
			return nil, err
		}
	}
	return append(b, ']'), nil
}

// span is where something was written in the view.
type span struct{ start, end int32 }

// member is a member of an element's view: an attribute (child 0, name
// "@" and its local name) or the group of the children of one name (child
// is the first of them).
type member struct {
	name  string
	attr  int32
	child int32
}

// writeCanonical appends the canonical form of node i's value, which
// writeNode wrote to p.view: the view's bytes as they are when they are in
// canonical order, else its members in canonical order, each copied from
// the view, and the values of children by writeCanonical again.
func (p *parser) writeCanonical(b []byte, i int32) []byte {
	n := &p.nodes[i]
	if n.canonical {
		return append(b, p.view[n.viewStart:n.viewEnd]...)
	}
	// The members, and their canonical order, are listed on stacks shared
	// with the nested calls, which push theirs above and take them off
	// before returning.
	first, start := len(p.members), len(p.order)
	for k := n.attrStart; k < n.attrEnd; k++ {
		p.members = append(p.members, member{name: p.attrName(p.attrs[k].Name.Local), attr: k})
	}
	for c := n.firstChild; c != 0; c = p.nodes[c].next {
		if p.nodes[c].groupHead {
			p.members = append(p.members, member{name: p.nodes[c].name, child: c})
		}
	}
	p.order = append(p.order, p.canonicalOrder(n.name, p.members[first:])...)
	b = append(b, '{')
	for k := start; k < len(p.order); k++ {
		if k > start {
			b = append(b, ',')
		}
		if m := p.members[first+int(p.order[k])]; m.child == 0 {
			at := p.attrViews[m.attr]
			b = append(b, p.view[at.start:at.end]...)
		} else {
			b = p.writeCanonicalGroup(b, m.child)
		}
	}
	p.members, p.order = p.members[:first], p.order[:start]
	return append(b, '}')
}

// memberOrder is the canonical order of an element's members: their names
// in document order, and their indexes in that list sorted by
// canon.CompareNames.
type memberOrder struct {
	names  []string
	sorted []int32
}

// canonicalOrder returns the indexes of members, the members of an
// element of the given name in document order, in canonical order.
// Elements of one name mostly have the same members in the same order
// (each of SAP's segments its fields), so the order found for a name is
// kept, and is used again while the names are the same: comparing names
// that the scanner interned costs next to nothing, where sorting them was
// a tenth of a packet's parse. The order returned is valid until the next
// call.
func (p *parser) canonicalOrder(element string, members []member) []int32 {
	o := p.orders[element]
	if o == nil {
		if p.orders == nil {
			p.orders = make(map[string]*memberOrder)
		}
		o = &memberOrder{}
		p.orders[element] = o
	}
	if o.sameNames(members) {
		return o.sorted
	}
	o.names, o.sorted = o.names[:0], o.sorted[:0]
	for k, m := range members {
		o.names = append(o.names, m.name)
		o.sorted = append(o.sorted, int32(k))
	}
	slices.SortFunc(o.sorted, func(a, b int32) int { return canon.CompareNames(o.names[a], o.names[b]) })
	return o.sorted
}

// sameNames tells whether members have the names of o, in o's order.
func (o *memberOrder) sameNames(members []member) bool {
	if len(members) != len(o.names) {
		return false
	}
	for k, m := range members {
		if m.name != o.names[k] {
			return false
		}
	}
	return true
}

// writeCanonicalGroup appends the member of the children of one name whose
// first is c, with its name as the view has it.
func (p *parser) writeCanonicalGroup(b []byte, c int32) []byte {
	head := &p.nodes[c]
	if head.nextSame == 0 {
		b = append(b, p.view[head.memberStart:head.viewStart]...)
		return p.writeCanonical(b, c)
	}
	// The name, the colon and the array's '['.
	b = append(b, p.view[head.memberStart:head.viewStart]...)
	for s := c; s != 0; s = p.nodes[s].nextSame {
		if s != c {
			b = append(b, ',')
		}
		b = p.writeCanonical(b, s)
	}
	return append(b, ']')
}

// attrName is an attribute's member name, "@" and its local name, made
// once per name and document.
func (p *parser) attrName(local string) string {
	// SAP's segments have one attribute, SEGMENT: the last name made is
	// nearly always the one wanted, and found without a look-up.
	if p.lastAttr.local == local && p.lastAttr.name != "" {
		return p.lastAttr.name
	}
	name, ok := p.attrNames[local]
	if !ok {
		if p.attrNames == nil {
			p.attrNames = make(map[string]string)
		}
		name = "@" + local
		p.attrNames[local] = name
	}
	p.lastAttr.local, p.lastAttr.name = local, name
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
