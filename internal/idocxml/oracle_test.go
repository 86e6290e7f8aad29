package idocxml

// The parser as it was before it read raw tokens into a flat tree, kept
// as the oracle that the differential tests hold the current one to.

import (
	"bytes"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/go-json-experiment/json/jsontext"
	"golang.org/x/text/encoding/charmap"

	"github.com/lefia/edihub/internal/canon"
	"github.com/lefia/edihub/internal/loadgen"
)

// oldParse is Parse as it was, over oldParser.
func oldParse(body []byte, charset string, limits Limits) (Document, error) {
	if charset == "" {
		charset = declaredEncoding(body)
	}
	latin1, err := isLatin1(charset)
	if err != nil {
		return Document{}, err
	}
	if err := checkStartTags(body, limits.elementsFor(len(body))); err != nil {
		return Document{}, err
	}
	text := body
	if latin1 {
		if text, err = charmap.ISO8859_1.NewDecoder().Bytes(body); err != nil {
			return Document{}, &MalformedError{Reason: "the body is not ISO-8859-1"}
		}
	}
	p := oldParser{limits: limits, maxElements: limits.elementsFor(len(body))}
	doc, err := p.parse(text)
	if err != nil || !latin1 {
		return doc, err
	}
	toBody := func(offset int) int { return utf8.RuneCount(text[:offset]) }
	doc.head, doc.tail = toBody(doc.head), toBody(doc.tail)
	for i := range doc.IDocs {
		doc.IDocs[i].Start, doc.IDocs[i].End = toBody(doc.IDocs[i].Start), toBody(doc.IDocs[i].End)
	}
	return doc, nil
}

// element is an element being read, and once read, a node of the view.
type oldElement struct {
	name     string
	attrs    []xml.Attr
	children []*oldElement
	text     []byte
}

type oldParser struct {
	limits      Limits
	elements    int
	maxElements int
	dec         *xml.Decoder
}

func (p *oldParser) parse(text []byte) (Document, error) {
	p.dec = xml.NewDecoder(bytes.NewReader(text))
	// The body has already been decoded to UTF-8 by the charset Parse
	// chose, so whatever the declaration names is read as it is.
	p.dec.CharsetReader = func(_ string, r io.Reader) (io.Reader, error) { return r, nil }

	var doc Document
	rootSeen := false
	for {
		tok, err := p.token()
		if err == io.EOF {
			break
		}
		if err != nil {
			return doc, err
		}
		switch t := tok.(type) {
		case xml.StartElement:
			if rootSeen {
				return doc, &MalformedError{Reason: "content after the root element"}
			}
			rootSeen = true
			if err := p.root(t, &doc); err != nil {
				return doc, err
			}
		case xml.CharData:
			if len(bytes.TrimSpace(t)) > 0 {
				return doc, &MalformedError{Reason: "text outside the root element"}
			}
		}
	}
	if !rootSeen {
		return doc, &MalformedError{Reason: "the document has no root element"}
	}
	return doc, nil
}

// token returns the next token, refusing document type declarations: with
// them go entity declarations, which this parser does not expand.
func (p *oldParser) token() (xml.Token, error) {
	tok, err := p.dec.Token()
	if err == io.EOF {
		return nil, err
	}
	var syntaxErr *xml.SyntaxError
	if errors.As(err, &syntaxErr) {
		return nil, &MalformedError{Reason: fmt.Sprintf("line %d: %s", syntaxErr.Line, syntaxErr.Msg)}
	}
	if err != nil {
		return nil, &MalformedError{Reason: err.Error()}
	}
	if _, ok := tok.(xml.Directive); ok {
		return nil, &InvalidError{Reason: "the document has a DOCTYPE or other <!…> declaration; " +
			"IDoc-XML needs none and they are not accepted"}
	}
	return tok, nil
}

// root reads the root element, whose children must all be IDOC elements.
func (p *oldParser) root(start xml.StartElement, doc *Document) error {
	doc.Root = start.Name.Local
	if err := p.count(1); err != nil {
		return err
	}
	for {
		offset := int(p.dec.InputOffset())
		tok, err := p.token()
		if err == io.EOF {
			return &MalformedError{Reason: "the document ends inside the root element"}
		}
		if err != nil {
			return err
		}
		switch t := tok.(type) {
		case xml.StartElement:
			position := len(doc.IDocs) + 1
			if t.Name.Local != "IDOC" {
				return &InvalidError{Reason: fmt.Sprintf("the root element %s holds an element %s; "+
					"an IDoc document holds IDOC elements only", doc.Root, t.Name.Local)}
			}
			if err := p.limits.checkIDocs(position); err != nil {
				return err
			}
			e, err := p.element(t, 2)
			if err != nil {
				return err
			}
			idoc, err := oldNewIDoc(doc.Root, e, position)
			if err != nil {
				return err
			}
			idoc.Start, idoc.End = offset, int(p.dec.InputOffset())
			if position == 1 {
				doc.head = offset
			}
			doc.tail = idoc.End
			doc.IDocs = append(doc.IDocs, idoc)
		case xml.CharData:
			if len(bytes.TrimSpace(t)) > 0 {
				return &InvalidError{Reason: "the root element holds text; an IDoc document holds IDOC elements only"}
			}
		case xml.EndElement:
			if len(doc.IDocs) == 0 {
				return &InvalidError{Reason: fmt.Sprintf("the root element %s holds no IDOC element", doc.Root)}
			}
			return nil
		}
	}
}

func (p *oldParser) count(n int) error {
	p.elements += n
	if p.elements > p.maxElements {
		return &TooManyElementsError{Max: p.maxElements}
	}
	return nil
}

// element reads the element that start opens, at the given depth, with
// everything inside it. It works with an explicit stack, so that a deep
// document costs memory in proportion to its depth and never Go stack.
func (p *oldParser) element(start xml.StartElement, depth int) (*oldElement, error) {
	newElement := func(s xml.StartElement) (*oldElement, error) {
		if err := p.count(1 + len(s.Attr)); err != nil {
			return nil, err
		}
		attrs := make([]xml.Attr, 0, len(s.Attr))
		for _, a := range s.Attr {
			if a.Name.Space == "xmlns" || a.Name.Local == "xmlns" {
				continue // namespace declarations are syntax, not content
			}
			for _, b := range attrs {
				if b.Name.Local == a.Name.Local {
					return nil, &MalformedError{Reason: fmt.Sprintf("element %s has the attribute %s twice", s.Name.Local, a.Name.Local)}
				}
			}
			attrs = append(attrs, a)
		}
		return &oldElement{name: s.Name.Local, attrs: attrs}, nil
	}
	top, err := newElement(start)
	if err != nil {
		return nil, err
	}
	stack := []*oldElement{top}
	for len(stack) > 0 {
		tok, err := p.token()
		if err == io.EOF {
			return nil, &MalformedError{Reason: "the document ends inside an element"}
		}
		if err != nil {
			return nil, err
		}
		current := stack[len(stack)-1]
		switch t := tok.(type) {
		case xml.StartElement:
			if depth+len(stack) > p.limits.MaxDepth {
				return nil, &InvalidError{Reason: fmt.Sprintf("elements are nested deeper than %d levels", p.limits.MaxDepth)}
			}
			child, err := newElement(t)
			if err != nil {
				return nil, err
			}
			current.children = append(current.children, child)
			stack = append(stack, child)
		case xml.CharData:
			current.text = append(current.text, t...)
		case xml.EndElement:
			stack = stack[:len(stack)-1]
		}
	}
	return top, nil
}

// isLeaf reports whether e's view is a string rather than an object.
func (e *oldElement) isLeaf() bool { return len(e.children) == 0 && len(e.attrs) == 0 }

// child returns e's only child named name; more than one is an error.
func (e *oldElement) child(name string) (*oldElement, error) {
	var found *oldElement
	for _, c := range e.children {
		if c.name == name {
			if found != nil {
				return nil, fmt.Errorf("%s holds %s more than once", e.name, name)
			}
			found = c
		}
	}
	return found, nil
}

// field returns the text of e's leaf child name, "" when there is none.
func (e *oldElement) field(name string) (string, error) {
	c, err := e.child(name)
	if err != nil || c == nil {
		return "", err
	}
	if !c.isLeaf() {
		return "", fmt.Errorf("%s.%s is not a plain field", e.name, name)
	}
	return string(c.text), nil
}

// newIDoc checks an IDOC element's control record and builds its view.
func oldNewIDoc(root string, e *oldElement, position int) (IDoc, error) {
	idoc := IDoc{Position: position}
	invalid := func(reason string) error {
		return &InvalidError{Position: position, Docnum: idoc.Docnum, Reason: reason}
	}
	control, err := e.child("EDI_DC40")
	if err != nil {
		return idoc, invalid(err.Error())
	}
	if control == nil || control.isLeaf() {
		return idoc, invalid("the IDoc has no control record EDI_DC40")
	}
	if idoc.Docnum, err = control.field("DOCNUM"); err != nil {
		return idoc, invalid(err.Error())
	}
	switch {
	case strings.TrimSpace(idoc.Docnum) == "":
		idoc.Docnum = ""
		return idoc, invalid("the control record has no DOCNUM")
	case len(idoc.Docnum) > MaxDocnumLength:
		idoc.Docnum = ""
		return idoc, invalid(fmt.Sprintf("DOCNUM is longer than %d bytes", MaxDocnumLength))
	}
	if idoc.IDocType, err = control.field("IDOCTYP"); err != nil {
		return idoc, invalid(err.Error())
	}
	if idoc.View, err = oldView(root, e); err != nil {
		return idoc, invalid(err.Error())
	}
	// The canonical form of the oracle's view is the library's, so the
	// parser's own canonical writing is checked against canon.JSON.
	if idoc.Canonical, err = canon.JSON(idoc.View); err != nil {
		return idoc, invalid(err.Error())
	}
	return idoc, nil
}

// view writes the JSON view {"<root>": {"IDOC": {...}}} of the IDOC element
// idoc (see the package comment).
func oldView(root string, idoc *oldElement) ([]byte, error) {
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
	if err := oldWriteElement(enc, idoc); err != nil {
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
func oldWriteElement(enc *jsontext.Encoder, e *oldElement) error {
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
	for _, group := range oldSiblingGroups(e.children) {
		if err := enc.WriteToken(jsontext.String(group[0].name)); err != nil {
			return err
		}
		if len(group) == 1 {
			if err := oldWriteElement(enc, group[0]); err != nil {
				return err
			}
			continue
		}
		if err := enc.WriteToken(jsontext.BeginArray); err != nil {
			return err
		}
		for _, c := range group {
			if err := oldWriteElement(enc, c); err != nil {
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
func oldSiblingGroups(children []*oldElement) [][]*oldElement {
	groups := make([][]*oldElement, 0, len(children))
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

// BenchmarkParsePacketOracle is BenchmarkParsePacket with the parser
// Parse replaced, so that both can be compared on one loaded machine.
func BenchmarkParsePacketOracle(b *testing.B) {
	body := loadgen.Packet(100, 2048, 1)
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	for b.Loop() {
		if doc, err := oldParse(body, "", DefaultLimits); err != nil || len(doc.IDocs) != 100 {
			b.Fatal(len(doc.IDocs), err)
		}
	}
}
