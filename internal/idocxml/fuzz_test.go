package idocxml_test

import (
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"encoding/xml"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/tidwall/gjson"

	"github.com/lefia/edihub/internal/canon"
	"github.com/lefia/edihub/internal/idocxml"
)

// xmlChars keeps the characters XML 1.0 can carry at all; any other is
// not part of a well-formed IDoc, whatever escaping is used.
func xmlChars(s string) string {
	return strings.Map(func(r rune) rune {
		switch {
		case r == '\t' || r == '\n' || r == '\r',
			r >= 0x20 && r <= 0xD7FF, r >= 0xE000 && r <= 0xFFFD, r >= 0x10000 && r <= 0x10FFFF:
			return r
		}
		return -1
	}, strings.ToValidUTF8(s, ""))
}

func escape(s string) string {
	var b strings.Builder
	_ = xml.EscapeText(&b, []byte(s))
	return b.String()
}

// FuzzViewRoundTrip builds a well-formed IDoc from the fuzzer's values (in
// fields, an attribute and a segment repeated n times) and checks that its
// view holds every value exactly, where the paths of the JSON samples read
// it.
func FuzzViewRoundTrip(f *testing.F) {
	f.Add("0000000000900101", "4500012345", "Purchasing Group 210", " 12.000 ", uint8(0))
	f.Add("1", "a & b <c>", "\"quoted\" 'single'", "tab\there\r\nnewline", uint8(2))
	f.Add("ÄÖÜ", "日本", "]]>", "", uint8(3))
	f.Fuzz(func(t *testing.T, docnum, a, b, c string, repeat uint8) {
		docnum, a, b, c = xmlChars(docnum), xmlChars(a), xmlChars(b), xmlChars(c)
		if strings.TrimSpace(docnum) == "" || len(docnum) > idocxml.MaxDocnumLength {
			docnum = "1"
		}
		n := int(repeat%4) + 1
		var body strings.Builder
		body.WriteString(`<?xml version="1.0" encoding="UTF-8"?><ZORDERS05><IDOC BEGIN="1">`)
		fmt.Fprintf(&body, `<EDI_DC40 SEGMENT="1"><DOCNUM>%s</DOCNUM><IDOCTYP>%s</IDOCTYP></EDI_DC40>`, escape(docnum), escape(a))
		values := []string{a, b, c}
		for i := range n {
			fmt.Fprintf(&body, `<E1EDP01 SEGMENT="1" NOTE="%s"><POSEX>%s</POSEX><E1EDP19><IDTNR>%s</IDTNR></E1EDP19></E1EDP01>`,
				escape(values[i%3]), escape(values[(i+1)%3]), escape(values[(i+2)%3]))
		}
		body.WriteString(`</IDOC></ZORDERS05>`)

		doc, err := idocxml.Parse([]byte(body.String()), "", idocxml.DefaultLimits)
		require.NoError(t, err, body.String())
		require.Len(t, doc.IDocs, 1)
		idoc := doc.IDocs[0]
		require.Equal(t, docnum, idoc.Docnum)
		require.Equal(t, a, idoc.IDocType)
		view := idoc.View
		require.True(t, json.Valid(view))
		require.Equal(t, docnum, gjson.GetBytes(view, "*.IDOC.EDI_DC40.DOCNUM").Str)
		require.Equal(t, "1", gjson.GetBytes(view, "ZORDERS05.IDOC.@BEGIN").Str)
		items := gjson.GetBytes(view, "[*.IDOC.E1EDP01]|@flatten").Array()
		require.Len(t, items, n)
		require.Equal(t, n > 1, gjson.GetBytes(view, "*.IDOC.E1EDP01").IsArray())
		for i, item := range items {
			require.Equal(t, values[i%3], item.Get("@NOTE").Str)
			require.Equal(t, values[(i+1)%3], item.Get("POSEX").Str)
			require.Equal(t, values[(i+2)%3], item.Get("E1EDP19.IDTNR").Str)
			require.Equal(t, "1", item.Get("@SEGMENT").Str)
		}
	})
}

// FuzzParseXML feeds arbitrary bytes to the parser: it never panics, and what
// it accepts has views of valid JSON, written beside their canonical forms,
// and byte ranges inside the body.
func FuzzParseXML(f *testing.F) {
	for _, name := range []string{"orders05.xml", "invoic02.xml", "orders05_packet.xml"} {
		f.Add(readSample(f, name), "")
	}
	f.Add([]byte(`<R><IDOC><EDI_DC40><DOCNUM>1</DOCNUM></EDI_DC40></IDOC></R>`), "iso-8859-1")
	f.Add([]byte(`<!DOCTYPE R [<!ENTITY e "x">]><R>&e;</R>`), "")
	f.Fuzz(func(t *testing.T, body []byte, charset string) {
		limits := idocxml.Limits{MaxDepth: 16, MaxElements: 1000}
		doc, err := idocxml.Parse(body, charset, limits)
		if err != nil {
			return
		}
		require.NotEmpty(t, doc.IDocs)
		for _, idoc := range doc.IDocs {
			require.True(t, json.Valid(idoc.View), "%q", idoc.View)
			canonical, err := canon.JSON(idoc.View)
			require.NoError(t, err)
			require.Equal(t, string(canonical), string(idoc.Canonical), "the canonical form written beside the view")
			content := sha256.Sum256(idoc.Canonical)
			require.Equal(t, content, canon.ShapeHash(idoc.Canonical, content),
				"the view holds no one-item array, so its shape hash is its content hash (ingest.Request.ShapeIsContent)")
			require.Equal(t, idoc.Docnum, gjson.GetBytes(idoc.View, "*.IDOC.EDI_DC40.DOCNUM").Str)
			require.True(t, 0 <= idoc.Start && idoc.Start < idoc.End && idoc.End <= len(body))
			own := doc.Own(body, idoc)
			view, err := idocxml.ViewOf(own, charset)
			require.NoError(t, err, "%q", own)
			require.True(t, bytes.Equal(idoc.View, view), "the view rebuilt from the bytes stored")
		}
	})
}
