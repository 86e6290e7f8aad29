// Package idocxml reads IDoc-XML, the documents SAP's XML HTTP ports send,
// and turns each IDoc in it into its JSON view: the document that key paths,
// fingerprints and content hashes read, so that an IDoc sent as XML and the
// same IDoc sent as a JSON envelope are the same message.
//
// The view of an IDoc is {"<root>": {"IDOC": {...}}}: an element becomes a
// member named after it, elements that occur more than once among their
// siblings one array (at the place of the first), an attribute a member
// named "@<name>", and the text of an element without children or
// attributes a string, exactly as written.
//
// The parser is safe by construction: it is encoding/xml, which expands
// only the five predefined entities and never fetches anything; a document
// type declaration (and with it any entity declaration) is refused outright;
// nesting depth and the number of elements are bounded; and the caller
// bounds the body's size before it gets here.
package idocxml

import (
	"bytes"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"regexp"
	"strings"
	"unicode/utf8"

	"golang.org/x/text/encoding/charmap"
)

// Limits bound what one document may cost to read.
type Limits struct {
	// MaxDepth is the deepest element nesting accepted, the root being 1.
	// SAP's segment hierarchy is at most 99 levels below the IDOC element.
	MaxDepth int
	// MaxElements is the most elements a document may hold in all.
	MaxElements int
}

// DefaultLimits admit any IDoc SAP can produce in a body of the default
// 10 MiB: a real IDoc holds one element per field, of at least 7 bytes.
var DefaultLimits = Limits{MaxDepth: 128, MaxElements: 1_500_000}

// Document is a parsed IDoc-XML document.
type Document struct {
	// Root is the root element's name: the IDoc type or its extension.
	Root  string
	IDocs []IDoc
	// Byte offsets into the received body: the first IDOC element starts
	// at head and the last ends at tail.
	head, tail int
}

// IDoc is one IDOC element of a document.
type IDoc struct {
	Position int    // 1 for the document's first IDoc
	Docnum   string // EDI_DC40.DOCNUM
	IDocType string // EDI_DC40.IDOCTYP; "" when the control record has none
	// View is the IDoc's JSON view (see the package comment).
	View []byte
	// Start and End delimit the IDOC element in the received body.
	Start, End int
}

// Own returns the bytes stored for idoc: a document made of the received
// body's own bytes, in order, leaving out the document's other IDocs. For a
// document of one IDoc that is the whole body, byte for byte; for a packet
// it is everything before the first IDoc (the declaration, the root's start
// tag), this IDoc, and everything after the last one, so that each IDoc of
// a packet is stored as a complete IDoc-XML document of its own.
func (d Document) Own(body []byte, idoc IDoc) []byte {
	if len(d.IDocs) == 1 {
		return body
	}
	own := make([]byte, 0, d.head+(idoc.End-idoc.Start)+len(body)-d.tail)
	own = append(own, body[:d.head]...)
	own = append(own, body[idoc.Start:idoc.End]...)
	return append(own, body[d.tail:]...)
}

// MalformedError says that a document is not well-formed XML, or uses a
// character encoding other than the one it names.
type MalformedError struct{ Reason string }

func (e *MalformedError) Error() string { return "malformed XML: " + e.Reason }

// InvalidError says that a well-formed document is not an IDoc document,
// or breaks one of the Limits. Position and Docnum name the IDoc at fault
// when it is one IDoc (Position 0: the document as a whole).
type InvalidError struct {
	Position int
	Docnum   string
	Reason   string
}

func (e *InvalidError) Error() string {
	switch {
	case e.Position == 0:
		return e.Reason
	case e.Docnum == "":
		return fmt.Sprintf("IDoc %d: %s", e.Position, e.Reason)
	}
	return fmt.Sprintf("IDoc %d (DOCNUM %s): %s", e.Position, e.Docnum, e.Reason)
}

// ErrUnsupportedCharset is returned for a charset other than UTF-8 (and its
// subset US-ASCII) and ISO-8859-1.
var ErrUnsupportedCharset = errors.New("unsupported charset")

// Parse reads body as an IDoc-XML document. charset is the Content-Type's
// charset parameter, "" when there is none: it wins over the encoding the
// XML declaration names, and without either the body is UTF-8.
func Parse(body []byte, charset string, limits Limits) (Document, error) {
	if charset == "" {
		charset = declaredEncoding(body)
	}
	latin1, err := isLatin1(charset)
	if err != nil {
		return Document{}, err
	}
	text := body
	if latin1 {
		// Each ISO-8859-1 byte is one character, so an offset into the
		// UTF-8 text maps back to the body by counting characters.
		if text, err = charmap.ISO8859_1.NewDecoder().Bytes(body); err != nil {
			return Document{}, &MalformedError{Reason: "the body is not ISO-8859-1"}
		}
	}
	p := parser{limits: limits}
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

// Text returns body as text, read with the charset Parse reads it with, so
// that a person can be shown what was received.
func Text(body []byte, charset string) (string, error) {
	if charset == "" {
		charset = declaredEncoding(body)
	}
	latin1, err := isLatin1(charset)
	if err != nil || !latin1 {
		return string(body), err
	}
	text, err := charmap.ISO8859_1.NewDecoder().Bytes(body)
	return string(text), err
}

// xmlDeclaration matches the encoding an XML declaration names; the
// declaration, if any, must open the document.
var xmlDeclaration = regexp.MustCompile(`^(?:\xef\xbb\xbf)?<\?xml\s[^?>]*?encoding\s*=\s*["']([A-Za-z0-9._-]+)["']`)

func declaredEncoding(body []byte) string {
	if m := xmlDeclaration.FindSubmatch(body[:min(len(body), 256)]); m != nil {
		return string(m[1])
	}
	return ""
}

// isLatin1 tells ISO-8859-1 from UTF-8 by the names RFC 1345 and the IANA
// registry give them; any other charset is refused.
func isLatin1(charset string) (bool, error) {
	switch strings.ToLower(charset) {
	case "", "utf-8", "utf8", "us-ascii", "ascii":
		return false, nil
	case "iso-8859-1", "iso8859-1", "iso_8859-1", "latin1", "latin-1", "l1", "iso-ir-100", "ibm819", "cp819":
		return true, nil
	}
	return false, fmt.Errorf("%w %q: send UTF-8 or ISO-8859-1", ErrUnsupportedCharset, charset)
}

// element is an element being read, and once read, a node of the view.
type element struct {
	name     string
	attrs    []xml.Attr
	children []*element
	text     []byte
}

type parser struct {
	limits   Limits
	elements int
	dec      *xml.Decoder
}

func (p *parser) parse(text []byte) (Document, error) {
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
func (p *parser) token() (xml.Token, error) {
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
func (p *parser) root(start xml.StartElement, doc *Document) error {
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
			e, err := p.element(t, 2)
			if err != nil {
				return err
			}
			idoc, err := newIDoc(doc.Root, e, position)
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

func (p *parser) count(n int) error {
	p.elements += n
	if p.elements > p.limits.MaxElements {
		return &InvalidError{Reason: fmt.Sprintf("the document holds more than %d elements", p.limits.MaxElements)}
	}
	return nil
}

// element reads the element that start opens, at the given depth, with
// everything inside it. It works with an explicit stack, so that a deep
// document costs memory in proportion to its depth and never Go stack.
func (p *parser) element(start xml.StartElement, depth int) (*element, error) {
	newElement := func(s xml.StartElement) (*element, error) {
		if err := p.count(1); err != nil {
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
		return &element{name: s.Name.Local, attrs: attrs}, nil
	}
	top, err := newElement(start)
	if err != nil {
		return nil, err
	}
	stack := []*element{top}
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
func (e *element) isLeaf() bool { return len(e.children) == 0 && len(e.attrs) == 0 }

// child returns e's only child named name; more than one is an error.
func (e *element) child(name string) (*element, error) {
	var found *element
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
func (e *element) field(name string) (string, error) {
	c, err := e.child(name)
	if err != nil || c == nil {
		return "", err
	}
	if !c.isLeaf() {
		return "", fmt.Errorf("%s.%s is not a plain field", e.name, name)
	}
	return string(c.text), nil
}

// MaxDocnumLength is the longest DOCNUM accepted, as for JSON envelopes
// (an IDoc's own DOCNUM has 16 characters).
const MaxDocnumLength = 255

// newIDoc checks an IDOC element's control record and builds its view.
func newIDoc(root string, e *element, position int) (IDoc, error) {
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
	if idoc.View, err = view(root, e); err != nil {
		return idoc, invalid(err.Error())
	}
	return idoc, nil
}
