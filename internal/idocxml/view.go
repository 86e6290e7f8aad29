package idocxml

import (
	"bytes"
	"fmt"

	"github.com/go-json-experiment/json/jsontext"
)

// view writes the JSON view {"<root>": {"IDOC": {...}}} of the IDOC element
// idoc (see the package comment).
func view(root string, idoc *element) ([]byte, error) {
	var buf bytes.Buffer
	enc := jsontext.NewEncoder(&buf)
	write := func(tokens ...jsontext.Token) error {
		for _, t := range tokens {
			if err := enc.WriteToken(t); err != nil {
				return fmt.Errorf("write view: %w", err)
			}
		}
		return nil
	}
	if err := write(jsontext.BeginObject, jsontext.String(root), jsontext.BeginObject, jsontext.String(idoc.name)); err != nil {
		return nil, err
	}
	if err := writeElement(enc, idoc); err != nil {
		return nil, err
	}
	if err := write(jsontext.EndObject, jsontext.EndObject); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}

// writeElement writes e's value: its text when it is a leaf, else an
// object of its attributes and children, siblings of one name grouped in
// one array at the place of the first. An element with both text and
// children or attributes has no view under this convention, and is refused
// rather than losing the text.
func writeElement(enc *jsontext.Encoder, e *element) error {
	if e.isLeaf() {
		return enc.WriteToken(jsontext.String(string(e.text)))
	}
	if len(bytes.TrimSpace(e.text)) > 0 {
		return fmt.Errorf("element %s holds text beside child elements or attributes", e.name)
	}
	if err := enc.WriteToken(jsontext.BeginObject); err != nil {
		return err
	}
	for _, a := range e.attrs {
		if err := enc.WriteToken(jsontext.String("@" + a.Name.Local)); err != nil {
			return err
		}
		if err := enc.WriteToken(jsontext.String(a.Value)); err != nil {
			return err
		}
	}
	for _, group := range siblingGroups(e.children) {
		if err := enc.WriteToken(jsontext.String(group[0].name)); err != nil {
			return err
		}
		if len(group) == 1 {
			if err := writeElement(enc, group[0]); err != nil {
				return err
			}
			continue
		}
		if err := enc.WriteToken(jsontext.BeginArray); err != nil {
			return err
		}
		for _, c := range group {
			if err := writeElement(enc, c); err != nil {
				return err
			}
		}
		if err := enc.WriteToken(jsontext.EndArray); err != nil {
			return err
		}
	}
	return enc.WriteToken(jsontext.EndObject)
}

// siblingGroups groups children by name, in the order each name first
// occurs.
func siblingGroups(children []*element) [][]*element {
	groups := make([][]*element, 0, len(children))
	index := make(map[string]int, len(children))
	for _, c := range children {
		i, seen := index[c.name]
		if !seen {
			i = len(groups)
			index[c.name] = i
			groups = append(groups, nil)
		}
		groups[i] = append(groups[i], c)
	}
	return groups
}
