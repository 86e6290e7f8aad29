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
// only the five predefined entities and never fetches anything (or, for
// plain XML, a scanner that takes those entities only and leaves all else
// to encoding/xml); a document type declaration (and with it any entity
// declaration) is refused outright; nesting depth and the number of
// elements are bounded; and the caller bounds the body's size before it
// gets here.
package idocxml

import (
	"bytes"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"math"
	"regexp"
	"slices"
	"strings"
	"unicode/utf8"

	"golang.org/x/text/encoding/charmap"

	"github.com/lefia/edihub/internal/viewmem"
)

// Limits bound what one document may cost to read.
type Limits struct {
	// MaxDepth is the deepest element nesting accepted, the root being 1.
	// SAP's segment hierarchy is at most 99 levels below the IDOC element.
	MaxDepth int
	// MaxElements is the most elements and attributes a document may hold
	// in all.
	MaxElements int
	// ElementBytes, when set, bounds them by the document's size too: one
	// for every ElementBytes bytes of the body (and smallDocument whatever
	// its size). Each costs memory to read (a node of its IDoc's tree, an
	// attribute's name and value) many times its own bytes: without this
	// bound a body of <a/> cost 116 bytes allocated for each of its bytes,
	// SAP's IDocs 1.7 (BenchmarkParseDenseIDoc). With it, what reading costs
	// stays in proportion to the bytes, which the server's body budget
	// counts.
	ElementBytes int
	// MaxIDocs is the most IDocs a document may hold (0: no limit). Each
	// IDoc becomes a message decided in the request's one transaction, so
	// a packet costs the database in proportion to its IDocs; reading stops
	// at the first IDoc past the limit.
	MaxIDocs int
}

// DefaultLimits admit any IDoc SAP can produce: SAP writes an element per
// field, with the field's name twice (<MENGE>10</MENGE>), and an attribute
// per segment, about one for every 23 bytes without indentation (the
// samples in testdata), while ten bytes hold at most two empty elements.
// A packet holds as many IDocs as a batch holds messages by default.
var DefaultLimits = Limits{MaxDepth: 128, MaxElements: 1_500_000, ElementBytes: 10, MaxIDocs: 1000}

// smallDocument is how many elements and attributes any document may
// hold, whatever its size and ElementBytes.
const smallDocument = 1000

// elementsFor is the most elements and attributes a body of size bytes
// may hold.
func (l Limits) elementsFor(size int) int {
	if l.ElementBytes <= 0 {
		return l.MaxElements
	}
	return min(l.MaxElements, max(size/l.ElementBytes, smallDocument))
}

// Document is a parsed IDoc-XML document.
type Document struct {
	// Root is the root element's name: the IDoc type or its extension.
	Root  string
	IDocs []IDoc
	// Byte offsets into the received body: the first IDOC element starts
	// at head and the last ends at tail.
	head, tail int
	// views holds the memory of the IDocs' views and own documents.
	views *viewmem.Memory
}

// Release gives the memory of d's views, canonical forms and own
// documents (Own) back to be written over by later documents', and clears
// the views from d.IDocs: a caller that is done with them, its messages
// stored, calls it so that the next document reuses the memory rather than
// allocating its own. A document that is not released is collected as any
// value is.
func (d Document) Release() {
	for i := range d.IDocs {
		d.IDocs[i].View, d.IDocs[i].Canonical = nil, nil
	}
	d.views.Release()
}

// IDoc is one IDOC element of a document.
type IDoc struct {
	Position int    // 1 for the document's first IDoc
	Docnum   string // EDI_DC40.DOCNUM
	IDocType string // EDI_DC40.IDOCTYP; "" when the control record has none
	// View is the IDoc's JSON view (see the package comment), its members
	// in document order; Canonical is the same view in its RFC 8785
	// canonical form, what canon.Canonicalise would make of View.
	View, Canonical []byte
	// Start and End delimit the IDOC element in the received body.
	Start, End int
}

// Own returns the bytes stored for idoc: a document made of the received
// body's own bytes, in order, leaving out the document's other IDocs. For a
// document of one IDoc that is the whole body, byte for byte; for a packet
// it is everything before the first IDoc (the declaration, the root's start
// tag), this IDoc, and everything after the last one, so that each IDoc of
// a packet is stored as a complete IDoc-XML document of its own. A packet's
// own documents are written to d's memory, and so are read no longer than
// its views (Release).
func (d Document) Own(body []byte, idoc IDoc) []byte {
	if len(d.IDocs) == 1 {
		return body
	}
	own := d.views.Take(d.head + (idoc.End - idoc.Start) + len(body) - d.tail)
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

// TooManyIDocsError says that a document holds more IDocs than
// Limits.MaxIDocs; it was read no further than the first IDoc too many.
type TooManyIDocsError struct{ Max int }

func (e *TooManyIDocsError) Error() string {
	return fmt.Sprintf("the document holds more than %d IDocs", e.Max)
}

// TooManyElementsError says that a document holds more elements and
// attributes than Limits let a body of its size hold; it was read no
// further than the first one too many.
type TooManyElementsError struct{ Max int }

func (e *TooManyElementsError) Error() string {
	return fmt.Sprintf("the document holds more than %d elements and attributes", e.Max)
}

// ErrUnsupportedCharset is returned for a charset other than UTF-8 (and its
// subset US-ASCII) and ISO-8859-1.
var ErrUnsupportedCharset = errors.New("unsupported charset")

// Parse reads body as an IDoc-XML document. charset is the Content-Type's
// charset parameter, "" when there is none: it wins over the encoding the
// XML declaration names, and without either the body is UTF-8.
//
// The views are written to memory that Document.Release gives back for
// later documents' views once the caller is done with them.
func Parse(body []byte, charset string, limits Limits) (Document, error) {
	return parse(body, charset, limits, new(viewmem.Memory))
}

// parse is Parse with the views written to memory from views, or to memory
// of their own when views is nil.
func parse(body []byte, charset string, limits Limits, views *viewmem.Memory) (Document, error) {
	if charset == "" {
		charset = declaredEncoding(body)
	}
	latin1, err := isLatin1(charset)
	if err != nil {
		return Document{}, err
	}
	if len(body) > math.MaxInt32 {
		return Document{}, &InvalidError{Reason: "the body is 2 GiB or more"}
	}
	most := limits.elementsFor(len(body))
	if err := checkStartTags(body, most); err != nil {
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
	p := parser{limits: limits, maxElements: most, scan: &scanner{in: text}, views: views}
	doc, err := p.parse(text)
	if err == errNotPlain {
		p = parser{limits: limits, maxElements: most, views: views}
		doc, err = p.parse(text)
	}
	if err != nil {
		return doc, err
	}
	doc.views = views
	if !latin1 {
		return doc, nil
	}
	// The IDocs' offsets only grow, so one pass over the text counts the
	// characters before each of them; the document's head is where its
	// first IDoc starts and its tail where the last ends.
	at, chars := 0, 0
	toBody := func(offset int) int {
		chars += utf8.RuneCount(text[at:offset])
		at = offset
		return chars
	}
	for i := range doc.IDocs {
		doc.IDocs[i].Start, doc.IDocs[i].End = toBody(doc.IDocs[i].Start), toBody(doc.IDocs[i].End)
	}
	doc.head, doc.tail = doc.IDocs[0].Start, doc.IDocs[len(doc.IDocs)-1].End
	return doc, nil
}

// ViewOf rebuilds the view of the IDoc of own, the document stored for it
// (Document.Own), read with the charset it arrived with: a message is
// stored with the bytes it came as, not its view (docs/performance.md,
// "Views rebuilt, not stored"). own passed the limits as part of its
// document, and is not held to the elements its own size admits, which an
// IDoc denser than its packet would exceed.
func ViewOf(own []byte, charset string) ([]byte, error) {
	limits := DefaultLimits
	limits.ElementBytes, limits.MaxIDocs = 0, 1
	doc, err := parse(own, charset, limits, nil)
	if err != nil {
		return nil, err
	}
	return doc.IDocs[0].View, nil
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

// node is an element of the IDOC element being read, and once read, a node
// of its view. The nodes of an IDoc live in one slice and link to each
// other by index; index 0 is the IDOC element itself, which is no one's
// child or sibling, so 0 also stands for "none".
type node struct {
	name string
	// p.attrs[attrStart:attrEnd] are the element's attributes, namespace
	// declarations left out. Offsets are int32, as the links are, which
	// keeps a node, one per element, at 64 bytes rather than 112; Parse
	// refuses a body of 2 GiB or more.
	attrStart, attrEnd int32
	// text[textStart:textEnd] of the parser is the element's text up to
	// its first child: all of it when it has none.
	textStart, textEnd          int32
	firstChild, lastChild, next int32
	// nextSame is the next sibling of the same name, set when the parent's
	// view is written.
	nextSame int32
	// Once the view is written: p.view[viewStart:viewEnd] is the node's
	// value; for a groupHead, the member of its group starts at
	// memberStart.
	viewStart, viewEnd, memberStart int32
	// textAfter says that non-space text follows the first child.
	textAfter bool
	// groupHead marks the first of its siblings of its name, set when the
	// parent's view is written.
	groupHead bool
	// canonical says that the value as written to the view is in
	// canonical order (see writeCanonical).
	canonical bool
}

// leaf reports whether the node's view is a string rather than an object.
func (n *node) leaf() bool { return n.firstChild == 0 && n.attrEnd == n.attrStart }

// binding records a namespace prefix bound by an open element, and what
// the prefix was bound to before, so that closing the element undoes it.
type binding struct {
	prefix, previous string
	wasBound         bool
	depth            int
}

// tokenKind is what a token is; otherToken stands for comments and
// processing instructions, which hold nothing of the view.
type tokenKind uint8

const (
	otherToken tokenKind = iota
	startToken
	endToken
	textToken
)

// token is a start tag (name, attrs), an end tag (name) or text. Its
// attrs and text are valid until the next token is read. The parser reads
// every token into one of its own (parser.tok), which is handed on by
// pointer: returned by value through the readers, its copies were about a
// tenth of a packet's CPU. The scanner sets only the fields of the token's
// kind, and no one reads the others.
type token struct {
	kind  tokenKind
	name  xml.Name
	attrs []xml.Attr
	text  []byte
}

// parser reads a document from the scanner when it is plain XML, else
// from encoding/xml's raw tokens (RawToken), which spare the namespace
// translation and the second copy of every token that Token makes. It does
// itself what Token would add and this parser relies on: end tags must
// match their start tags, a document may not end inside an element, and a
// namespace declaration is recognised under a prefix bound to "xmlns", so
// the same documents are refused with the same messages.
type parser struct {
	limits   Limits
	elements int
	// maxElements is the most elements and attributes this document may
	// hold (Limits.elementsFor).
	maxElements int
	input       []byte   // the text being read
	scan        *scanner // nil: read with dec
	tok         token    // the last token read
	dec         *xml.Decoder
	open        []xml.Name // the open elements' names, as written
	ns          map[string]string
	views       *viewmem.Memory // what the IDocs' views are written to
	bindings    []binding

	// The IDOC element being read; reused from one IDoc to the next.
	nodes     []node
	attrs     []xml.Attr
	stack     []int32
	text      []byte
	view      []byte
	attrViews []span // where each of attrs was written in view
	members   []member
	order     []int32
	orders    map[string]*memberOrder
	attrNames map[string]string
	lastAttr  struct{ local, name string } // attrNames' entry found last
	attrSet   map[string]struct{}
	index     map[string]int32
}

func (p *parser) parse(text []byte) (Document, error) {
	p.input = text
	if p.scan == nil {
		p.dec = xml.NewDecoder(bytes.NewReader(text))
		// The body has already been decoded to UTF-8 by the charset Parse
		// chose, so whatever the declaration names is read as it is.
		p.dec.CharsetReader = func(_ string, r io.Reader) (io.Reader, error) { return r, nil }
	}

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
		switch tok.kind {
		case startToken:
			if rootSeen {
				return doc, &MalformedError{Reason: "content after the root element"}
			}
			rootSeen = true
			if err := p.root(tok, &doc); err != nil {
				return doc, err
			}
		case textToken:
			if len(bytes.TrimSpace(tok.text)) > 0 {
				return doc, &MalformedError{Reason: "text outside the root element"}
			}
		}
	}
	if !rootSeen {
		return doc, &MalformedError{Reason: "the document has no root element"}
	}
	return doc, nil
}

// token reads the next token into p.tok and returns it, refusing document
// type declarations: with them go entity declarations, which this parser
// does not expand.
func (p *parser) token() (*token, error) {
	if p.scan != nil {
		return p.plainToken()
	}
	t := &p.tok
	raw, err := p.dec.RawToken()
	if raw == nil {
		if err == io.EOF && len(p.open) > 0 {
			return nil, p.syntaxError("unexpected EOF")
		}
		return nil, malformed(err)
	}
	switch r := raw.(type) {
	case xml.Directive:
		return nil, &InvalidError{Reason: "the document has a DOCTYPE or other <!…> declaration; " +
			"IDoc-XML needs none and they are not accepted"}
	case xml.StartElement:
		p.open = append(p.open, r.Name)
		for _, a := range r.Attr {
			if a.Name.Space == "xmlns" {
				p.bind(a.Name.Local, a.Value)
			}
		}
		*t = token{kind: startToken, name: r.Name, attrs: r.Attr}
	case xml.EndElement:
		if err := p.close(r.Name); err != nil {
			return nil, err
		}
		*t = token{kind: endToken, name: r.Name}
	case xml.CharData:
		*t = token{kind: textToken, text: r}
	default:
		*t = token{kind: otherToken}
	}
	return t, nil
}

// plainToken reads the scanner's next token. Anything that is not plain,
// an end tag that does not match and the end of input inside an element
// among them, ends the scanner's reading: encoding/xml reads the document
// again and says what is wrong.
func (p *parser) plainToken() (*token, error) {
	t := &p.tok
	innermost := ""
	if len(p.open) > 0 {
		innermost = p.open[len(p.open)-1].Local
	}
	err := p.scan.next(t, innermost)
	switch {
	case err == io.EOF && len(p.open) == 0:
		return nil, err
	case err != nil:
		return nil, errNotPlain
	case t.kind == startToken:
		p.open = append(p.open, t.name)
	case t.kind == endToken:
		p.open = p.open[:len(p.open)-1]
	}
	return t, nil
}

// malformed translates the decoder's errors; io.EOF passes as it is.
func malformed(err error) error {
	if err == io.EOF {
		return err
	}
	var syntaxErr *xml.SyntaxError
	if errors.As(err, &syntaxErr) {
		return &MalformedError{Reason: fmt.Sprintf("line %d: %s", syntaxErr.Line, syntaxErr.Msg)}
	}
	return &MalformedError{Reason: err.Error()}
}

// syntaxError is the error encoding/xml's Token gives for msg at the
// decoder's current line.
func (p *parser) syntaxError(msg string) error {
	line, _ := p.dec.InputPos()
	return malformed(&xml.SyntaxError{Msg: msg, Line: line})
}

// close checks that the end tag name closes the innermost open element, as
// Token does, and undoes the namespace bindings that element made.
func (p *parser) close(name xml.Name) error {
	if len(p.open) == 0 {
		return p.syntaxError("unexpected end element </" + name.Local + ">")
	}
	start := p.open[len(p.open)-1]
	switch {
	case start.Local != name.Local:
		return p.syntaxError("element <" + start.Local + "> closed by </" + name.Local + ">")
	case start.Space != name.Space:
		space := name.Space
		if space == "" {
			space = `""`
		}
		return p.syntaxError("element <" + start.Local + "> in space " + start.Space +
			" closed by </" + name.Local + "> in space " + space)
	}
	p.open = p.open[:len(p.open)-1]
	for len(p.bindings) > 0 && p.bindings[len(p.bindings)-1].depth > len(p.open) {
		b := p.bindings[len(p.bindings)-1]
		if b.wasBound {
			p.ns[b.prefix] = b.previous
		} else {
			delete(p.ns, b.prefix)
		}
		p.bindings = p.bindings[:len(p.bindings)-1]
	}
	return nil
}

// bind binds a namespace prefix for the innermost open element.
func (p *parser) bind(prefix, url string) {
	if p.ns == nil {
		p.ns = make(map[string]string)
	}
	previous, wasBound := p.ns[prefix]
	p.bindings = append(p.bindings, binding{prefix: prefix, previous: previous, wasBound: wasBound, depth: len(p.open)})
	p.ns[prefix] = url
}

// isNamespaceDeclaration reports whether a is a namespace declaration, by
// the name Token would have given it: xmlns, xmlns:…, or a prefix bound to
// the namespace named "xmlns".
func (p *parser) isNamespaceDeclaration(a xml.Attr) bool {
	switch a.Name.Space {
	case "xmlns":
		return true
	case "", "xml":
		return a.Name.Local == "xmlns"
	}
	url, bound := p.ns[a.Name.Space]
	return (bound && url == "xmlns") || a.Name.Local == "xmlns"
}

// root reads the root element, whose children must all be IDOC elements.
func (p *parser) root(start *token, doc *Document) error {
	doc.Root = start.name.Local
	if err := p.count(1); err != nil {
		return err
	}
	for {
		offset := p.offset()
		tok, err := p.token()
		if err != nil {
			return err
		}
		switch tok.kind {
		case startToken:
			position := len(doc.IDocs) + 1
			if tok.name.Local != "IDOC" {
				return &InvalidError{Reason: fmt.Sprintf("the root element %s holds an element %s; "+
					"an IDoc document holds IDOC elements only", doc.Root, tok.name.Local)}
			}
			if err := p.limits.checkIDocs(position); err != nil {
				return err
			}
			if err := p.element(tok, 2); err != nil {
				return err
			}
			idoc, err := p.newIDoc(doc.Root, position)
			if err != nil {
				return err
			}
			idoc.Start, idoc.End = offset, p.offset()
			if position == 1 {
				doc.head = offset
			}
			doc.tail = idoc.End
			doc.IDocs = append(doc.IDocs, idoc)
		case textToken:
			if len(bytes.TrimSpace(tok.text)) > 0 {
				return &InvalidError{Reason: "the root element holds text; an IDoc document holds IDOC elements only"}
			}
		case endToken:
			if len(doc.IDocs) == 0 {
				return &InvalidError{Reason: fmt.Sprintf("the root element %s holds no IDOC element", doc.Root)}
			}
			return nil
		}
	}
}

// checkIDocs refuses the IDoc at position when it is one too many.
func (l Limits) checkIDocs(position int) error {
	if l.MaxIDocs > 0 && position > l.MaxIDocs {
		return &TooManyIDocsError{Max: l.MaxIDocs}
	}
	return nil
}

// offset is the input's offset after the last token.
func (p *parser) offset() int {
	if p.scan != nil {
		return p.scan.pos
	}
	return int(p.dec.InputOffset())
}

// count counts n more elements and attributes.
func (p *parser) count(n int) error {
	p.elements += n
	if p.elements > p.maxElements {
		return &TooManyElementsError{Max: p.maxElements}
	}
	return nil
}

// newNode adds the element s opens to the nodes, and its attributes other
// than namespace declarations to p.attrs.
func (p *parser) newNode(s *token) error {
	if err := p.count(1 + len(s.attrs)); err != nil {
		return err
	}
	first := len(p.attrs)
	for _, a := range s.attrs {
		if !p.isNamespaceDeclaration(a) { // namespace declarations are syntax, not content
			p.attrs = append(p.attrs, a)
		}
	}
	if name, twice := p.repeatedAttr(p.attrs[first:]); twice {
		return &MalformedError{Reason: fmt.Sprintf("element %s has the attribute %s twice", s.name.Local, name)}
	}
	if len(p.nodes) == cap(p.nodes) {
		p.reserveNodes()
	}
	p.nodes = append(p.nodes, node{name: s.name.Local, attrStart: int32(first), attrEnd: int32(len(p.attrs)),
		textStart: int32(len(p.text)), textEnd: int32(len(p.text))})
	return nil
}

// repeatedAttr returns the first attribute name of attrs that an earlier
// one has. An element has one attribute or two, compared in place; a
// hostile one with thousands is checked with a set, not in quadratic time.
func (p *parser) repeatedAttr(attrs []xml.Attr) (string, bool) {
	if len(attrs) <= fewNames {
		for i, a := range attrs {
			for _, b := range attrs[:i] {
				if b.Name.Local == a.Name.Local {
					return a.Name.Local, true
				}
			}
		}
		return "", false
	}
	if p.attrSet == nil {
		p.attrSet = make(map[string]struct{})
	}
	clear(p.attrSet)
	for _, a := range attrs {
		if _, seen := p.attrSet[a.Name.Local]; seen {
			return a.Name.Local, true
		}
		p.attrSet[a.Name.Local] = struct{}{}
	}
	return "", false
}

// reserveNodes makes room at once for the elements of a large IDoc:
// appended one by one, the nodes of an IDoc of a million elements would
// be copied over and over, leaving about four times their size behind as
// garbage. It counts the start tags before the next </IDOC, once the
// nodes of a small IDoc are used up; the count only sizes the slice, and
// append still grows it past a count that was short.
func (p *parser) reserveNodes() {
	const small = 1024
	if len(p.nodes) < small {
		return // append's growth costs little here
	}
	rest := p.input[p.offset():]
	if end := bytes.Index(rest, []byte("</IDOC")); end >= 0 {
		rest = rest[:end]
	}
	p.nodes = slices.Grow(p.nodes, max(min(startTags(rest), p.maxElements-p.elements), small))
}

// checkStartTags refuses, before anything is read, a body of more start
// tags than the most elements it may hold, so that the densest documents
// cost no more than this count to refuse. The count is of '<' followed by
// anything but '/', '?' and '!', in comments and CDATA sections too (where
// SAP writes none).
func checkStartTags(body []byte, most int) error {
	// Counting every '<', end tags too, takes a vector instruction a few
	// bytes, and is enough for most documents.
	if bytes.Count(body, []byte{'<'}) <= most {
		return nil
	}
	if startTags(body) > most {
		return &TooManyElementsError{Max: most}
	}
	return nil
}

// startTags counts the start tags of text, and maybe a few more: a '<'
// and a name's first character in a comment or a CDATA section count too.
func startTags(text []byte) int {
	n := 0
	for {
		i := bytes.IndexByte(text, '<')
		if i < 0 || i+1 >= len(text) {
			return n
		}
		if c := text[i+1]; c != '/' && c != '?' && c != '!' {
			n++
		}
		text = text[i+1:]
	}
}

// element reads the IDOC element that start opens, at the given depth,
// with everything inside it, into p.nodes. It works with an explicit
// stack, so that a deep document costs memory in proportion to its depth
// and never Go stack.
func (p *parser) element(start *token, depth int) error {
	p.nodes, p.attrs, p.text = p.nodes[:0], p.attrs[:0], p.text[:0]
	if err := p.newNode(start); err != nil {
		return err
	}
	p.stack = append(p.stack[:0], 0)
	for len(p.stack) > 0 {
		tok, err := p.token()
		if err != nil {
			return err
		}
		current := &p.nodes[p.stack[len(p.stack)-1]]
		switch tok.kind {
		case startToken:
			if depth+len(p.stack) > p.limits.MaxDepth {
				return &InvalidError{Reason: fmt.Sprintf("elements are nested deeper than %d levels", p.limits.MaxDepth)}
			}
			parent := p.stack[len(p.stack)-1]
			if err := p.newNode(tok); err != nil {
				return err
			}
			child := int32(len(p.nodes) - 1)
			if current := &p.nodes[parent]; current.firstChild == 0 {
				current.firstChild = child
			} else {
				p.nodes[current.lastChild].next = child
			}
			p.nodes[parent].lastChild = child
			p.stack = append(p.stack, child)
		case textToken:
			// Until the first child, the text of the innermost element is
			// the last thing written to p.text, and so stays in one piece.
			if current.firstChild == 0 {
				p.text = append(p.text, tok.text...)
				current.textEnd = int32(len(p.text))
			} else if !current.textAfter && len(bytes.TrimSpace(tok.text)) > 0 {
				current.textAfter = true
			}
		case endToken:
			p.stack = p.stack[:len(p.stack)-1]
		}
	}
	return nil
}

// textOf returns node i's text (see node).
func (p *parser) textOf(i int32) []byte {
	n := &p.nodes[i]
	return p.text[n.textStart:n.textEnd]
}

// child returns the only child named name of node i (0 when there is
// none); more than one is an error.
func (p *parser) child(i int32, name string) (int32, error) {
	var found int32
	for c := p.nodes[i].firstChild; c != 0; c = p.nodes[c].next {
		if p.nodes[c].name == name {
			if found != 0 {
				return 0, fmt.Errorf("%s holds %s more than once", p.nodes[i].name, name)
			}
			found = c
		}
	}
	return found, nil
}

// field returns the text of node i's leaf child name, "" when there is none.
func (p *parser) field(i int32, name string) (string, error) {
	c, err := p.child(i, name)
	if err != nil || c == 0 {
		return "", err
	}
	if !p.nodes[c].leaf() {
		return "", fmt.Errorf("%s.%s is not a plain field", p.nodes[i].name, name)
	}
	return string(p.textOf(c)), nil
}

// MaxDocnumLength is the longest DOCNUM accepted, as for JSON envelopes
// (an IDoc's own DOCNUM has 16 characters).
const MaxDocnumLength = 255

// newIDoc checks the control record of the IDOC element just read and
// builds its view.
func (p *parser) newIDoc(root string, position int) (IDoc, error) {
	idoc := IDoc{Position: position}
	invalid := func(reason string) error {
		return &InvalidError{Position: position, Docnum: idoc.Docnum, Reason: reason}
	}
	control, err := p.child(0, "EDI_DC40")
	if err != nil {
		return idoc, invalid(err.Error())
	}
	if control == 0 || p.nodes[control].leaf() {
		return idoc, invalid("the IDoc has no control record EDI_DC40")
	}
	if idoc.Docnum, err = p.field(control, "DOCNUM"); err != nil {
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
	if idoc.IDocType, err = p.field(control, "IDOCTYP"); err != nil {
		return idoc, invalid(err.Error())
	}
	if idoc.View, idoc.Canonical, err = p.writeView(root); err != nil {
		return idoc, invalid(err.Error())
	}
	return idoc, nil
}
