package idocxml

import (
	"bytes"
	"fmt"

	"github.com/go-json-experiment/json/jsontext"
)

// writeView returns the JSON view {"<root>": {"IDOC": {...}}} of the IDOC
// element just read (see the package comment). It is written straight
// into one buffer, reused from one IDoc to the next, with jsontext's
// quoting, which is what jsontext's encoder writes for the same tokens;
// every member name is unique by construction (attributes are checked when
// read; children are grouped by name).
func (p *parser) writeView(root string) ([]byte, error) {
	b := append(p.view[:0], '{')
	b, err := jsontext.AppendQuote(b, root)
	if err != nil {
		return nil, fmt.Errorf("write view: %w", err)
	}
	b = append(b, ":{"...)
	if b, err = jsontext.AppendQuote(b, p.nodes[0].name); err != nil {
		return nil, fmt.Errorf("write view: %w", err)
	}
	b = append(b, ':')
	if b, err = p.writeNode(b, 0); err != nil {
		return nil, err
	}
	p.view = append(b, "}}"...)
	return bytes.Clone(p.view), nil
}

// writeNode appends node i's value: its text when it is a leaf, else an
// object of its attributes and children, siblings of one name grouped in
// one array at the place of the first. An element with both text and
// children or attributes has no view under this convention, and is refused
// rather than losing the text.
func (p *parser) writeNode(b []byte, i int32) ([]byte, error) {
	n := &p.nodes[i]
	if n.leaf() {
		return jsontext.AppendQuote(b, p.textOf(i))
	}
	if n.textAfter || len(bytes.TrimSpace(p.textOf(i))) > 0 {
		return nil, fmt.Errorf("element %s holds text beside child elements or attributes", n.name)
	}
	b = append(b, '{')
	var err error
	for k, a := range p.attrs[n.attrStart:n.attrEnd] {
		if k > 0 {
			b = append(b, ',')
		}
		p.key = append(append(p.key[:0], '@'), a.Name.Local...)
		if b, err = jsontext.AppendQuote(b, p.key); err != nil {
			return nil, err
		}
		b = append(b, ':')
		if b, err = jsontext.AppendQuote(b, a.Value); err != nil {
			return nil, err
		}
	}
	p.group(i)
	members := n.attrEnd - n.attrStart
	for c := n.firstChild; c != 0; c = p.nodes[c].next {
		child := &p.nodes[c]
		if !child.groupHead {
			continue
		}
		if members > 0 {
			b = append(b, ',')
		}
		members++
		if b, err = jsontext.AppendQuote(b, child.name); err != nil {
			return nil, err
		}
		b = append(b, ':')
		if child.nextSame == 0 {
			if b, err = p.writeNode(b, c); err != nil {
				return nil, err
			}
			continue
		}
		b = append(b, '[')
		for s := c; s != 0; s = p.nodes[s].nextSame {
			if s != c {
				b = append(b, ',')
			}
			if b, err = p.writeNode(b, s); err != nil {
				return nil, err
			}
		}
		b = append(b, ']')
	}
	return append(b, '}'), nil
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
