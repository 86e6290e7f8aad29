package idocxml_test

import (
	"bytes"
	"crypto/sha256"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/tidwall/gjson"
	"golang.org/x/text/encoding/charmap"

	"github.com/lefia/edihub/internal/canon"
	"github.com/lefia/edihub/internal/fingerprint"
	"github.com/lefia/edihub/internal/idocxml"
)

// The files in testdata are copies of shared/samples, kept here so that the
// tests run in a clean clone of the repository.
func readSample(t testing.TB, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	require.NoError(t, err)
	return b
}

func parse(t *testing.T, body []byte) idocxml.Document {
	t.Helper()
	doc, err := idocxml.Parse(body, "", idocxml.DefaultLimits)
	require.NoError(t, err)
	return doc
}

func contentHash(t *testing.T, payload []byte) [32]byte {
	t.Helper()
	c, err := canon.Canonicalise(payload)
	require.NoError(t, err)
	defer c.Release()
	return sha256.Sum256(c.Bytes())
}

func fingerprintOf(t *testing.T, docnum string, payload []byte, paths ...string) string {
	t.Helper()
	res, err := fingerprint.Compute(fingerprint.Input{MessageTypeID: 7, Paths: paths, Docnum: docnum, Payload: payload})
	require.NoError(t, err)
	require.NotEmpty(t, res.Fingerprint)
	return res.Fingerprint
}

const (
	belnrPath = "*.IDOC.E1EDK01.BELNR"
	poPath    = `[*.IDOC.E1EDK02]|@flatten|#(QUALF=="001").BELNR`
)

// The view of an XML sample is its JSON sample: the same fingerprint under
// every path, and for orders05 the same content hash.
func TestSamplesViewMatchesJSON(t *testing.T) {
	t.Parallel()
	for _, name := range []string{"orders05", "invoic02"} {
		doc := parse(t, readSample(t, name+".xml"))
		require.Len(t, doc.IDocs, 1)
		idoc := doc.IDocs[0]
		asJSON := readSample(t, name+".json")
		require.Equal(t, gjson.GetBytes(asJSON, "*.IDOC.EDI_DC40.DOCNUM").String(), idoc.Docnum)
		require.Equal(t, gjson.GetBytes(asJSON, "*.IDOC.EDI_DC40.IDOCTYP").String(), idoc.IDocType)
		for _, paths := range [][]string{nil, {belnrPath}, {poPath}, {belnrPath, "*.IDOC.EDI_DC40.MESTYP"}} {
			require.Equal(t, fingerprintOf(t, idoc.Docnum, asJSON, paths...), fingerprintOf(t, idoc.Docnum, idoc.View, paths...),
				"%s with paths %q", name, paths)
		}
	}
	orders := parse(t, readSample(t, "orders05.xml")).IDocs[0]
	require.Equal(t, contentHash(t, readSample(t, "orders05.json")), contentHash(t, orders.View))
	require.JSONEq(t, string(readSample(t, "orders05.json")), string(orders.View))

	// invoic02.json has its one E1EDP01 as a one-item array, which XML
	// cannot express (see the samples' README); apart from that, the view
	// is the JSON sample.
	invoice := parse(t, readSample(t, "invoic02.xml")).IDocs[0]
	asJSON := strings.Replace(string(readSample(t, "invoic02.json")), `"E1EDP01": [`, `"E1EDP01": `, 1)
	asJSON = strings.Replace(asJSON, "}\n   ],\n   \"E1EDS01\"", "},\n   \"E1EDS01\"", 1)
	require.JSONEq(t, asJSON, string(invoice.View))
}

func TestViewKeepsDocumentOrder(t *testing.T) {
	t.Parallel()
	doc := parse(t, []byte(`<ZORDERS05X><IDOC BEGIN="1"><EDI_DC40 SEGMENT="1"><DOCNUM>1</DOCNUM></EDI_DC40>`+
		`<B>b1</B><A>a</A><B>b2</B><EMPTY/><SEG SEGMENT="1"/><SP>  x &amp; &lt;y&gt; </SP></IDOC></ZORDERS05X>`))
	require.Equal(t, `{"ZORDERS05X":{"IDOC":{"@BEGIN":"1","EDI_DC40":{"@SEGMENT":"1","DOCNUM":"1"},`+
		`"B":["b1","b2"],"A":"a","EMPTY":"","SEG":{"@SEGMENT":"1"},"SP":"  x & <y> "}}}`, string(doc.IDocs[0].View))
	require.Empty(t, doc.IDocs[0].IDocType)
}

func TestPacket(t *testing.T) {
	t.Parallel()
	body := readSample(t, "orders05_packet.xml")
	doc := parse(t, body)
	require.Equal(t, "ORDERS05", doc.Root)
	require.Len(t, doc.IDocs, 3)
	for i, docnum := range []string{"0000000000900101", "0000000000900177", "0000000000900178"} {
		idoc := doc.IDocs[i]
		require.Equal(t, i+1, idoc.Position)
		require.Equal(t, docnum, idoc.Docnum)
		require.Equal(t, docnum, gjson.GetBytes(idoc.View, "ORDERS05.IDOC.EDI_DC40.DOCNUM").String())
		require.True(t, bytes.HasPrefix(body[idoc.Start:], []byte(`<IDOC BEGIN="1">`)))
		require.True(t, bytes.HasSuffix(body[:idoc.End], []byte(`</IDOC>`)))

		// An IDoc's own bytes are a document of that IDoc alone.
		own := doc.Own(body, idoc)
		alone := parse(t, own)
		require.Len(t, alone.IDocs, 1)
		require.Equal(t, idoc.View, alone.IDocs[0].View)
		require.True(t, bytes.HasPrefix(own, []byte(`<?xml version="1.0" encoding="UTF-8"?>`+"\n<ORDERS05>\n  <IDOC")))
		require.True(t, bytes.HasSuffix(own, []byte("</IDOC>\n</ORDERS05>\n")))
	}
	// The first IDoc of the packet is orders05.xml.
	require.Equal(t, readSample(t, "orders05.xml"), doc.Own(body, doc.IDocs[0]))
}

func TestSingleIDocIsStoredWhole(t *testing.T) {
	t.Parallel()
	body := []byte("<?xml version=\"1.0\"?>\n<!-- sent by Q01 -->\n<X>\n<IDOC><EDI_DC40><DOCNUM>1</DOCNUM></EDI_DC40></IDOC>\n</X>\n")
	doc := parse(t, body)
	require.Equal(t, body, doc.Own(body, doc.IDocs[0]))
}

func latin1(t *testing.T, s string) []byte {
	t.Helper()
	b, err := charmap.ISO8859_1.NewEncoder().Bytes([]byte(s))
	require.NoError(t, err)
	return b
}

func TestCharsets(t *testing.T) {
	t.Parallel()
	const idocs = `<ORDERS05><IDOC><EDI_DC40><DOCNUM>1</DOCNUM></EDI_DC40><E1EDKA1><BNAME>Müller Straße</BNAME></E1EDKA1></IDOC>` +
		`<IDOC><EDI_DC40><DOCNUM>2</DOCNUM></EDI_DC40><E1EDKA1><BNAME>Ærø</BNAME></E1EDKA1></IDOC></ORDERS05>`
	declared := latin1(t, `<?xml version="1.0" encoding="ISO-8859-1"?>`+idocs)
	cases := []struct {
		name    string
		body    []byte
		charset string
	}{
		{"utf-8 without a declaration", []byte(idocs), ""},
		{"utf-8 declared", []byte(`<?xml version="1.0" encoding="utf-8"?>` + idocs), ""},
		{"iso-8859-1 declared", declared, ""},
		{"iso-8859-1 in the content type", latin1(t, idocs), "ISO-8859-1"},
		{"the content type wins over the declaration", latin1(t, `<?xml version="1.0" encoding="UTF-8"?>`+idocs), "latin1"},
	}
	for _, tc := range cases {
		doc, err := idocxml.Parse(tc.body, tc.charset, idocxml.DefaultLimits)
		require.NoError(t, err, tc.name)
		require.Equal(t, "Müller Straße", gjson.GetBytes(doc.IDocs[0].View, "ORDERS05.IDOC.E1EDKA1.BNAME").String(), tc.name)
		require.Equal(t, "Ærø", gjson.GetBytes(doc.IDocs[1].View, "ORDERS05.IDOC.E1EDKA1.BNAME").String(), tc.name)
		// Offsets are the body's, not those of its UTF-8 reading.
		for _, idoc := range doc.IDocs {
			require.True(t, bytes.HasPrefix(tc.body[idoc.Start:], []byte("<IDOC>")), tc.name)
			require.True(t, bytes.HasSuffix(tc.body[:idoc.End], []byte("</IDOC>")), tc.name)
		}
	}

	// The same bytes read as UTF-8 are not valid UTF-8.
	_, err := idocxml.Parse(declared, "utf-8", idocxml.DefaultLimits)
	var malformed *idocxml.MalformedError
	require.ErrorAs(t, err, &malformed)

	_, err = idocxml.Parse([]byte(idocs), "shift_jis", idocxml.DefaultLimits)
	require.ErrorIs(t, err, idocxml.ErrUnsupportedCharset)
	_, err = idocxml.Parse([]byte(`<?xml version="1.0" encoding="UTF-16"?>`+idocs), "", idocxml.DefaultLimits)
	require.ErrorIs(t, err, idocxml.ErrUnsupportedCharset)
}

const control = `<EDI_DC40 SEGMENT="1"><DOCNUM>42</DOCNUM></EDI_DC40>`

func TestRefusals(t *testing.T) {
	t.Parallel()
	malformed := []string{
		``,
		`   `,
		`<ORDERS05><IDOC>` + control + `</IDOC>`,
		`<ORDERS05><IDOC>` + control + `</IDOX></ORDERS05>`,
		`<ORDERS05><IDOC>` + control + `<A>&unknown;</A></IDOC></ORDERS05>`,
		`<ORDERS05><IDOC>` + control + `</IDOC></ORDERS05><ORDERS05/>`,
		`<ORDERS05><IDOC>` + control + `</IDOC></ORDERS05>trailing`,
		`<ORDERS05><IDOC>` + control + `<A x="1" x="2"/></IDOC></ORDERS05>`,
		"<ORDERS05><IDOC>" + control + "<A>\x01</A></IDOC></ORDERS05>",
		"<ORDERS05><IDOC>" + control + "<A>\xff</A></IDOC></ORDERS05>",
		`{"ORDERS05": {}}`,
	}
	for _, body := range malformed {
		_, err := idocxml.Parse([]byte(body), "", idocxml.DefaultLimits)
		var e *idocxml.MalformedError
		require.ErrorAs(t, err, &e, "%q", body)
	}

	invalid := []struct {
		body     string
		position int
		docnum   string
		reason   string
	}{
		{`<!DOCTYPE ORDERS05 [<!ENTITY x "y">]><ORDERS05><IDOC>` + control + `<A>&x;</A></IDOC></ORDERS05>`, 0, "", "DOCTYPE"},
		{`<?xml version="1.0"?><!DOCTYPE ORDERS05 SYSTEM "file:///etc/passwd"><ORDERS05/>`, 0, "", "DOCTYPE"},
		{`<ORDERS05/>`, 0, "", "no IDOC element"},
		{`<ORDERS05>text</ORDERS05>`, 0, "", "holds text"},
		{`<ORDERS05><E1EDK01/></ORDERS05>`, 0, "", "IDOC elements only"},
		{`<ORDERS05><IDOC>` + control + `</IDOC><IDOC><E1EDK01/></IDOC></ORDERS05>`, 2, "", "no control record"},
		{`<ORDERS05><IDOC><EDI_DC40>x</EDI_DC40></IDOC></ORDERS05>`, 1, "", "no control record"},
		{`<ORDERS05><IDOC>` + control + control + `</IDOC></ORDERS05>`, 1, "", "more than once"},
		{`<ORDERS05><IDOC><EDI_DC40><MANDT>200</MANDT></EDI_DC40></IDOC></ORDERS05>`, 1, "", "no DOCNUM"},
		{`<ORDERS05><IDOC><EDI_DC40><DOCNUM> </DOCNUM></EDI_DC40></IDOC></ORDERS05>`, 1, "", "no DOCNUM"},
		{`<ORDERS05><IDOC><EDI_DC40><DOCNUM><X/></DOCNUM></EDI_DC40></IDOC></ORDERS05>`, 1, "", "not a plain field"},
		{`<ORDERS05><IDOC><EDI_DC40><DOCNUM>` + strings.Repeat("9", 256) + `</DOCNUM></EDI_DC40></IDOC></ORDERS05>`, 1, "", "longer than 255"},
		{`<ORDERS05><IDOC>` + control + `<E1EDK01 SEGMENT="1">text<BELNR>1</BELNR></E1EDK01></IDOC></ORDERS05>`, 1, "42", "holds text beside"},
	}
	for _, tc := range invalid {
		_, err := idocxml.Parse([]byte(tc.body), "", idocxml.DefaultLimits)
		var e *idocxml.InvalidError
		require.ErrorAs(t, err, &e, tc.body)
		require.Equal(t, tc.position, e.Position, tc.body)
		require.Equal(t, tc.docnum, e.Docnum, tc.body)
		require.Contains(t, e.Error(), tc.reason, tc.body)
	}
}

func TestLimits(t *testing.T) {
	t.Parallel()
	limits := idocxml.Limits{MaxDepth: 6, MaxElements: 10}
	deep := `<R><IDOC>` + control + `<A><B><C><D>x</D></C></B></A></IDOC></R>` // D is at depth 6
	_, err := idocxml.Parse([]byte(deep), "", limits)
	require.NoError(t, err)
	deeper := `<R><IDOC>` + control + `<A><B><C><D><E>x</E></D></C></B></A></IDOC></R>`
	_, err = idocxml.Parse([]byte(deeper), "", limits)
	var invalid *idocxml.InvalidError
	require.ErrorAs(t, err, &invalid)
	require.Contains(t, invalid.Error(), "deeper than 6")

	// R, IDOC, EDI_DC40, its attribute and DOCNUM count five: five more fit.
	fits := `<R><IDOC>` + control + strings.Repeat("<F>1</F>", 5) + `</IDOC></R>`
	_, err = idocxml.Parse([]byte(fits), "", limits)
	require.NoError(t, err)
	var tooMany *idocxml.TooManyElementsError
	for _, more := range []string{`<F>1</F>`, `<F a="1"/>`} {
		body := `<R><IDOC>` + control + strings.Repeat("<F>1</F>", 4) + more + `<F>1</F></IDOC></R>`
		_, err = idocxml.Parse([]byte(body), "", limits)
		require.ErrorAs(t, err, &tooMany, body)
		require.Equal(t, "the document holds more than 10 elements and attributes", err.Error())
	}

	// A packet of more IDocs than MaxIDocs is read no further than the
	// first one too many: what follows it, malformed here, is never seen.
	idoc := `<IDOC>` + control + `</IDOC>`
	limits.MaxIDocs = 2
	_, err = idocxml.Parse([]byte(`<R>`+idoc+idoc+`</R>`), "", limits)
	require.NoError(t, err)
	var tooManyIDocs *idocxml.TooManyIDocsError
	for _, body := range []string{`<R>` + idoc + idoc + idoc + `</R>`, `<R>` + idoc + idoc + `<IDOC><<<`} {
		_, err = idocxml.Parse([]byte(body), "", limits)
		require.ErrorAs(t, err, &tooManyIDocs, body)
		require.Equal(t, "the document holds more than 2 IDocs", err.Error())
	}

	// A billion-laughs document never gets to expand anything.
	laughs := `<?xml version="1.0"?><!DOCTYPE lolz [<!ENTITY lol "lol"><!ENTITY lol2 "&lol;&lol;&lol;&lol;">]>` +
		`<lolz>&lol2;</lolz>`
	_, err = idocxml.Parse([]byte(laughs), "", idocxml.DefaultLimits)
	require.ErrorAs(t, err, &invalid)
}

// A document denser in elements than one for every ElementBytes bytes (the
// issue's IDoc of 1,449,000 <a/> in 5.8 MB, which cost 270 MiB to read) is
// refused before it is read, at next to no cost; the densest one accepted
// costs a bounded multiple of its bytes. Not parallel: it measures what the
// process allocates.
func TestDenseDocumentsCostInProportionToTheirBytes(t *testing.T) {
	allocatedPerByte := func(body []byte) (float64, error) {
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		_, err := idocxml.Parse(body, "", idocxml.DefaultLimits)
		runtime.ReadMemStats(&after)
		return float64(after.TotalAlloc-before.TotalAlloc) / float64(len(body)), err
	}
	dense := denseIDoc(1_449_000)
	perByte, err := allocatedPerByte(dense)
	var tooMany *idocxml.TooManyElementsError
	require.ErrorAs(t, err, &tooMany)
	require.Equal(t, len(dense)/idocxml.DefaultLimits.ElementBytes, tooMany.Max)
	require.Less(t, perByte, 0.1, "refused before it is read")

	// About 10 bytes a byte (49 before nodes shrank and were reserved at
	// once); the race detector's instrumentation adds some.
	densest := idocOfRepeated("<ab>1</ab>", 579_000)
	perByte, err = allocatedPerByte(densest)
	require.NoError(t, err)
	require.Less(t, perByte, 20.0)
}

// An element of many attributes is checked for a repeated one in linear
// time: in quadratic time, 60,000 attributes took 8 s of a core and
// 100,000 take over 20 s, where linear time takes half a second (a few
// under the race detector on busy cores).
func TestManyAttributesAreReadInLinearTime(t *testing.T) {
	t.Parallel()
	var b strings.Builder
	b.WriteString(`<R><IDOC>` + control + `<A`)
	for i := range 100_000 {
		fmt.Fprintf(&b, ` a%d=""`, i)
	}
	// Text enough to let the attributes fit one for every ElementBytes bytes.
	b.WriteString(`/><B>` + strings.Repeat("x", 1_000_000) + `</B></IDOC></R>`)
	for _, repeated := range []string{"", ` a7=""`} {
		body := strings.Replace(b.String(), `/><B>`, repeated+`/><B>`, 1)
		start := time.Now()
		_, err := idocxml.Parse([]byte(body), "", idocxml.DefaultLimits)
		require.Less(t, time.Since(start), 10*time.Second)
		if repeated == "" {
			require.NoError(t, err)
			continue
		}
		var malformed *idocxml.MalformedError
		require.ErrorAs(t, err, &malformed)
		require.Contains(t, err.Error(), "the attribute a7 twice")
	}
}

// An IDoc is stored as its own document, not its view: ViewOf rebuilds the
// view it was read with, in the charset it came in, even when the IDoc is
// denser than the packet whose size admitted its elements.
func TestViewOfRebuildsTheViewStored(t *testing.T) {
	t.Parallel()
	sparse := `<IDOC BEGIN="1"><EDI_DC40 SEGMENT="1"><DOCNUM>2</DOCNUM></EDI_DC40><E1EDK01 SEGMENT="1"><BELNR>` +
		strings.Repeat("x", 20_000) + `</BELNR></E1EDK01></IDOC>`
	dense := `<IDOC BEGIN="1"><EDI_DC40 SEGMENT="1"><DOCNUM>1</DOCNUM></EDI_DC40>` + strings.Repeat(`<A/>`, 1500) + `</IDOC>`
	cases := map[string]struct {
		body    []byte
		charset string
	}{
		"packet":                   {readSample(t, "orders05_packet.xml"), ""},
		"latin1":                   {latin1(t, `<?xml version="1.0" encoding="ISO-8859-1"?><R><IDOC><EDI_DC40><DOCNUM>1</DOCNUM></EDI_DC40><T>été</T></IDOC><IDOC><EDI_DC40><DOCNUM>2</DOCNUM></EDI_DC40></IDOC></R>`), ""},
		"charset named":            {latin1(t, `<R><IDOC><EDI_DC40><DOCNUM>1</DOCNUM></EDI_DC40><T>été</T></IDOC></R>`), "iso-8859-1"},
		"dense in a sparse packet": {[]byte(`<R>` + dense + sparse + `</R>`), ""},
	}
	for name, c := range cases {
		doc, err := idocxml.Parse(c.body, c.charset, idocxml.DefaultLimits)
		require.NoError(t, err, name)
		for _, idoc := range doc.IDocs {
			view, err := idocxml.ViewOf(doc.Own(c.body, idoc), c.charset)
			require.NoError(t, err, "%s, IDoc %d", name, idoc.Position)
			require.Equal(t, string(idoc.View), string(view), "%s, IDoc %d", name, idoc.Position)
		}
	}
	_, err := idocxml.ViewOf(readSample(t, "orders05_packet.xml"), "")
	require.Error(t, err, "a packet is not one IDoc's document")
}
