package messageview

import (
	"bytes"
	"encoding/xml"
	"errors"
	"io"
	"strings"
)

// indentXML lays XML out one element a line, indented by depth, so that an
// IDoc sent as one long line reads as a tree; an element holding only text
// keeps it on its line. It reads tokens without resolving namespaces, so
// prefixes stay as sent; comments, processing instructions and the
// declaration keep their place. Text that is not whole XML (cut at
// MaxShownBytes, or not XML at all) is refused, and shown as received.
func indentXML(src string) (string, bool) {
	d := xml.NewDecoder(strings.NewReader(src))
	// The text is already UTF-8 (idocxml.Text), whatever its declaration
	// says.
	d.CharsetReader = func(_ string, r io.Reader) (io.Reader, error) { return r, nil }
	var (
		out     bytes.Buffer
		depth   int
		pending *xml.StartElement // an element opened whose content is not known yet
		text    string            // the text read inside pending
		root    bool              // an element was read
	)
	line := func(depth int, s string) {
		if out.Len() > 0 {
			out.WriteByte('\n')
		}
		out.WriteString(strings.Repeat("  ", depth))
		out.WriteString(s)
	}
	flush := func() {
		if pending != nil {
			line(depth-1, startTag(*pending))
			if text != "" {
				line(depth, escaped(text))
			}
			pending, text = nil, ""
		}
	}
	for {
		tok, err := d.RawToken()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return "", false
		}
		switch t := tok.(type) {
		case xml.StartElement:
			flush()
			start := t.Copy()
			pending, root = &start, true
			depth++
		case xml.EndElement:
			depth--
			if pending != nil {
				line(depth, startTag(*pending)+escaped(text)+"</"+qname(t.Name)+">")
				pending, text = nil, ""
				continue
			}
			line(depth, "</"+qname(t.Name)+">")
		case xml.CharData:
			if s := strings.TrimSpace(string(t)); s != "" {
				if pending == nil {
					line(depth, escaped(s))
				} else {
					text += s
				}
			}
		case xml.Comment:
			flush()
			line(depth, "<!--"+string(t)+"-->")
		case xml.ProcInst:
			flush()
			line(depth, "<?"+t.Target+" "+string(t.Inst)+"?>")
		case xml.Directive:
			flush()
			line(depth, "<!"+string(t)+">")
		}
	}
	if depth != 0 || !root {
		return "", false
	}
	return out.String(), true
}

func qname(n xml.Name) string {
	if n.Space != "" {
		return n.Space + ":" + n.Local
	}
	return n.Local
}

func startTag(e xml.StartElement) string {
	var b strings.Builder
	b.WriteString("<" + qname(e.Name))
	for _, a := range e.Attr {
		b.WriteString(" " + qname(a.Name) + `="`)
		b.WriteString(escaped(a.Value))
		b.WriteString(`"`)
	}
	b.WriteString(">")
	return b.String()
}

func escaped(s string) string {
	var b bytes.Buffer
	_ = xml.EscapeText(&b, []byte(s))
	return b.String()
}
