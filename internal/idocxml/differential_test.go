package idocxml

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"golang.org/x/text/encoding/charmap"

	"github.com/lefia/edihub/internal/loadgen"
)

// differentialCases are documents chosen for the places where reading raw
// tokens could part from Token: end tags, namespaces, the end of input,
// and text split across tokens; and for the view's grouping and refusals.
var differentialCases = []string{
	// Namespace declarations, under xmlns, a default, and a prefix bound to
	// the namespace named "xmlns", in and out of scope.
	`<R xmlns:p="xmlns"><IDOC p:a="1" b="2"><EDI_DC40><DOCNUM>1</DOCNUM></EDI_DC40></IDOC></R>`,
	`<R><IDOC><EDI_DC40 xmlns:p="xmlns" p:x="1" y="2"><DOCNUM p:z="3">1</DOCNUM></EDI_DC40><A p:x="1"/></IDOC></R>`,
	`<R xmlns:p="xmlns"><IDOC><EDI_DC40><DOCNUM>1</DOCNUM></EDI_DC40><A xmlns:p="u" p:x="1"/><B p:x="2"/></IDOC></R>`,
	`<R><IDOC xmlns="urn:x" xmlns:q="urn:q" q:x="1" a:xmlns="2" xml:lang="de"><EDI_DC40><DOCNUM>1</DOCNUM></EDI_DC40></IDOC></R>`,
	`<R><IDOC xmlns:xml="xmlns" xml:a="1" xmlns:xmlns="xmlns"><EDI_DC40><DOCNUM>1</DOCNUM></EDI_DC40></IDOC></R>`,
	`<R><IDOC q:a="1" r:a="2"><EDI_DC40><DOCNUM>1</DOCNUM></EDI_DC40></IDOC></R>`,
	`<a:R xmlns:a="urn:a"><a:IDOC><a:EDI_DC40><a:DOCNUM>1</a:DOCNUM></a:EDI_DC40></a:IDOC></a:R>`,
	// End tags that do not match, and end tags with nothing open.
	`<R><IDOC><EDI_DC40><DOCNUM>1</DOCNUM></EDI_DC40></a:IDOC></R>`,
	`<R><IDOC><EDI_DC40><DOCNUM>1</DOCNUM></EDI_DC40><a:X></b:X></IDOC></R>`,
	`<R><IDOC><EDI_DC40><DOCNUM>1</DOCNUM></EDI_DC40><a:X></X></IDOC></R>`,
	`<R><IDOC><EDI_DC40><DOCNUM>1</DOCNUM></EDI_DC40><X></a:X></IDOC></R>`,
	"<R>\n<IDOC>\n<EDI_DC40><DOCNUM>1</DOCNUM></EDI_DC40>\n</IDOX>\n</R>",
	"<R>\n<IDOC><EDI_DC40><DOCNUM>1</DOCNUM></EDI_DC40></IDOC></R></R>",
	"</R>",
	"<R></S>",
	"\n\n<R><IDOC><EDI_DC40><DOCNUM>1</DOCNUM></EDI_DC40></IDOC>\n\n",
	// Text in pieces: comments, processing instructions, CDATA, references.
	`<R><IDOC><EDI_DC40><DOCNUM>1<!-- c -->2</DOCNUM><IDOCTYP>A<?pi x?>B<![CDATA[<&>]]>&amp;&#x41;&#66;</IDOCTYP></EDI_DC40></IDOC></R>`,
	`<R><IDOC><EDI_DC40><DOCNUM>1</DOCNUM></EDI_DC40><A>&#0;</A></IDOC></R>`,
	`<R><IDOC><EDI_DC40><DOCNUM>1</DOCNUM></EDI_DC40><A><!DOCTYPE x></A></IDOC></R>`,
	`<!-- a --><?pi?><R><!-- b --><IDOC><EDI_DC40><DOCNUM>1</DOCNUM></EDI_DC40></IDOC><!-- c --></R><!-- d -->`,
	// Text beside children, before, between and after them, and spaces.
	`<R><IDOC><EDI_DC40><DOCNUM>1</DOCNUM></EDI_DC40><A>x<B/></A></IDOC></R>`,
	`<R><IDOC><EDI_DC40><DOCNUM>1</DOCNUM></EDI_DC40><A><B/>x</A></IDOC></R>`,
	`<R><IDOC><EDI_DC40><DOCNUM>1</DOCNUM></EDI_DC40><A> <B/> <C/>` + "\n\t" + `</A><D a="1"> </D></IDOC></R>`,
	"<R><IDOC><EDI_DC40><DOCNUM>1</DOCNUM></EDI_DC40><A>\u00a0<B/>\u0085</A></IDOC></R>",
	`<R><IDOC><EDI_DC40><DOCNUM>1</DOCNUM></EDI_DC40><A a="1">x</A></IDOC></R>`,
	`<R><IDOC><EDI_DC40><DOCNUM>1</DOCNUM></EDI_DC40><B><C/>t</B><A>t<X/></A><B>u<Y/></B></IDOC></R>`,
	// Grouping: interleaved names, few and many of them.
	`<R><IDOC><EDI_DC40><DOCNUM>1</DOCNUM></EDI_DC40><B>1</B><A/><B>2</B><C><D/><D><E/></D></C><A>3</A></IDOC></R>`,
	`<R><IDOC><EDI_DC40><DOCNUM>1</DOCNUM></EDI_DC40>` + manyNames(12, 3) + `</IDOC></R>`,
	`<R><IDOC><EDI_DC40><DOCNUM>1</DOCNUM></EDI_DC40><S>` + manyNames(9, 2) + `</S><S>` + manyNames(8, 2) + `</S></IDOC></R>`,
	`<R><IDOC><EDI_DC40><DOCNUM>1</DOCNUM></EDI_DC40>` + manyNames(40, 1) + `<N3>x<Y/></N3></IDOC></R>`,
	// The canonical form put together from the view: elements of one name
	// with the same members, other members, the same members in another
	// order, nested in an element of their own name, and values in
	// canonical order beside others not; across the IDocs of a packet.
	`<R><IDOC><EDI_DC40><DOCNUM>1</DOCNUM></EDI_DC40><P S="1"><Z>1</Z><A>2</A></P><P S="1"><Z>3</Z><A>4</A></P>` +
		`<P><Z>5</Z></P><P S="2"><A>6</A><Z>7</Z></P><P S="1"><Z>8</Z><A>9</A><P><Z>a</Z><A>b</A></P></P></IDOC>` +
		`<IDOC><EDI_DC40><DOCNUM>2</DOCNUM></EDI_DC40><P S="1"><Z>1</Z><A>2</A><B/></P><Q><A>1</A><B><D/><C/></B><C>2</C></Q></IDOC></R>`,
	`<R><IDOC><EDI_DC40><DOCNUM>1</DOCNUM></EDI_DC40><P b="1" a="2"><P a="3" b="4"/><P b="5" a="6"><_/></P></P><A>&quot;\</A></IDOC></R>`,
	// Control records.
	`<R><IDOC><EDI_DC40><DOCNUM>1</DOCNUM><DOCNUM>2</DOCNUM></EDI_DC40></IDOC></R>`,
	`<R><IDOC><EDI_DC40><DOCNUM a="1">1</DOCNUM></EDI_DC40></IDOC></R>`,
	`<R><IDOC><EDI_DC40><DOCNUM>1</DOCNUM><IDOCTYP><X/></IDOCTYP></EDI_DC40></IDOC></R>`,
	`<R><IDOC><EDI_DC40 a="1"/></IDOC></R>`,
	`<R><IDOC><EDI_DC40/></IDOC></R>`,
	`<R><IDOC/></R>`,
	`<R><IDOC><EDI_DC40><DOCNUM>` + "\t\n" + `</DOCNUM></EDI_DC40></IDOC></R>`,
	`<R><IDOC><EDI_DC40><DOCNUM>` + strings.Repeat("ä", 128) + `</DOCNUM></EDI_DC40></IDOC></R>`,
	`<R><IDOC><EDI_DC40><DOCNUM>1</DOCNUM></EDI_DC40></IDOC><IDOC><EDI_DC40><DOCNUM>1</DOCNUM></EDI_DC40><A>x<B/></A></IDOC></R>`,
	// The root and what lies around it.
	`<R><IDOC><EDI_DC40><DOCNUM>1</DOCNUM></EDI_DC40></IDOC><X/></R>`,
	`<R><IDOC><EDI_DC40><DOCNUM>1</DOCNUM></EDI_DC40></IDOC>t</R>`,
	`<R a="1" a="2"><IDOC><EDI_DC40><DOCNUM>1</DOCNUM></EDI_DC40></IDOC></R>`,
	`<R><IDOC><EDI_DC40><DOCNUM>1</DOCNUM></EDI_DC40></IDOC></R><R/>`,
	`<R><IDOC><EDI_DC40><DOCNUM>1</DOCNUM></EDI_DC40></IDOC></R>x`,
	`<?xml version="1.0" encoding="ISO-8859-1"?><R><IDOC><EDI_DC40><DOCNUM>ä</DOCNUM></EDI_DC40><A>Straße</A></IDOC></R>`,
	`<?xml version="1.1"?><R/>`,
	`<?xml version="1.0" encoding="UTF-16"?><R/>`,
	"\xef\xbb\xbf<R><IDOC><EDI_DC40><DOCNUM>1</DOCNUM></EDI_DC40></IDOC></R>",
	// What the scanner takes and what it leaves to encoding/xml: spaces in
	// tags, quotes, references, characters, names and declarations.
	"<R\t>\n<IDOC  BEGIN = '1'\n\tX=\"a\tb\nc\" ><EDI_DC40 ><DOCNUM >1</DOCNUM\n></EDI_DC40\t></IDOC ></R >",
	`<R><IDOC B="1"C="2"><EDI_DC40><DOCNUM>1</DOCNUM></EDI_DC40></IDOC></R>`,
	`<R><IDOC B="&amp;&lt;&gt;&apos;&quot;" C='"' D="'" E="]]>"><EDI_DC40><DOCNUM>&amp;1&lt;</DOCNUM></EDI_DC40><A>&quot;&apos;&gt;</A></IDOC></R>`,
	`<R><IDOC><EDI_DC40><DOCNUM>1</DOCNUM></EDI_DC40><A>&foo;</A><B>&amp</B><C>&#65;&#x42;</C></IDOC></R>`,
	`<R><IDOC B="&foo;"><EDI_DC40><DOCNUM>1</DOCNUM></EDI_DC40></IDOC></R>`,
	`<R><IDOC B="a<b"><EDI_DC40><DOCNUM>1</DOCNUM></EDI_DC40></IDOC></R>`,
	`<R><IDOC B=1><EDI_DC40><DOCNUM>1</DOCNUM></EDI_DC40></IDOC></R>`,
	`<R><IDOC B><EDI_DC40><DOCNUM>1</DOCNUM></EDI_DC40></IDOC></R>`,
	`<R><IDOC B="1><EDI_DC40><DOCNUM>1</DOCNUM></EDI_DC40></IDOC></R>`,
	`<R><IDOC><EDI_DC40><DOCNUM>1]]>2</DOCNUM></EDI_DC40></IDOC></R>`,
	`<R><IDOC><EDI_DC40><DOCNUM>1]]2]>]</DOCNUM></EDI_DC40></IDOC></R>`,
	"<R><IDOC><EDI_DC40><DOCNUM>1\r\n2\r3</DOCNUM></EDI_DC40><A B=\"x\r\ny\"/></IDOC></R>",
	"<R><IDOC B=\"\x01\"><EDI_DC40><DOCNUM>1\x7f\u00e4\u20ac\U0001F600\uFFFD</DOCNUM></EDI_DC40><A>\uFFFE</A></IDOC></R>",
	"<R><IDOC><EDI_DC40><DOCNUM>\xed\xa0\x80</DOCNUM></EDI_DC40><A>\xc3</A></IDOC></R>",
	`<R><IDOC><EDI_DC40><DOCNUM>1</DOCNUM></EDI_DC40><Ä>1</Ä><A.b-1_c>2</A.b-1_c><_x/></IDOC></R>`,
	`<R><IDOC><EDI_DC40><DOCNUM>1</DOCNUM></EDI_DC40><1A/></IDOC></R>`,
	`<R><IDOC><EDI_DC40><DOCNUM>1</DOCNUM></EDI_DC40><A/ ><B / ></IDOC></R>`,
	`<R><IDOC xmlns="urn:x" xmlns:p="urn:p"><EDI_DC40 xmlns=""><DOCNUM>1</DOCNUM></EDI_DC40></IDOC></R>`,
	`<?xml version='1.0' encoding='utf-8' standalone='yes'?><R><IDOC><EDI_DC40><DOCNUM>1</DOCNUM></EDI_DC40></IDOC></R>`,
	`<?xml version="1.0" encoding="windows-1252" standalone="no" ?><R><IDOC><EDI_DC40><DOCNUM>1</DOCNUM></EDI_DC40></IDOC></R>`,
	`<?xml version="1.0' encoding="UTF-8"?><R><IDOC><EDI_DC40><DOCNUM>1</DOCNUM></EDI_DC40></IDOC></R>`,
	`<?xml  version="1.0"?><R><IDOC><EDI_DC40><DOCNUM>1</DOCNUM></EDI_DC40></IDOC></R>`,
	` <?xml version="1.0"?><R><IDOC><EDI_DC40><DOCNUM>1</DOCNUM></EDI_DC40></IDOC></R>`,
	`<R><?xml version="1.0"?><IDOC><EDI_DC40><DOCNUM>1</DOCNUM></EDI_DC40></IDOC></R>`,
	`<?xml version="2.0"?><R><IDOC><EDI_DC40><DOCNUM>1</DOCNUM></EDI_DC40></IDOC></R>`,
	"\t\n <R><IDOC><EDI_DC40><DOCNUM>1</DOCNUM></EDI_DC40></IDOC></R>\n\t ",
	`<R><IDOC><EDI_DC40><DOCNUM>1</DOCNUM></EDI_DC40></IDOC><IDOC/></R>`,
	`<R><IDOC><EDI_DC40><DOCNUM>1</DOCNUM></EDI_DC40></IDOC></R`,
	`<R><IDOC><EDI_DC40><DOCNUM>1</DOCNUM></EDI_DC40></IDOC></`,
	`<R><IDOC><EDI_DC40><DOCNUM>1</DOCNUM></EDI_DC40></IDOC><`,
	`<R><IDOC><EDI_DC40><DOCNUM>1</DOCNUM></EDI_DC40></IDOC><A`,
	"<R><IDOC><EDI_DC40><DOCNUM>\xff</DOCNUM></EDI_DC40></IDOC></R>",
	"<R><IDOC><EDI_DC40><DOCNUM>1</DOCNUM></EDI_DC40><A b=\"\xe9\"/></IDOC></R>",
}

// manyNames returns n elements N0…N(n-1), repeated rounds times, the
// rounds interleaved.
func manyNames(n, rounds int) string {
	var b strings.Builder
	for r := range rounds {
		for i := range n {
			fmt.Fprintf(&b, `<N%d>%d</N%d>`, i, r, i)
		}
	}
	return b.String()
}

// differentialCorpus is what both parsers are given: the samples in
// testdata (the JSON ones as documents that are not XML), the fuzz
// targets' seeds, the cases above, and packets as the load generator
// builds them, in UTF-8 and in ISO-8859-1.
func differentialCorpus(t testing.TB) [][]byte {
	t.Helper()
	var corpus [][]byte
	files, err := filepath.Glob(filepath.Join("testdata", "*.*"))
	require.NoError(t, err)
	for _, name := range files {
		b, err := os.ReadFile(name)
		require.NoError(t, err)
		corpus = append(corpus, b)
	}
	corpus = append(corpus,
		[]byte(`<R><IDOC><EDI_DC40><DOCNUM>1</DOCNUM></EDI_DC40></IDOC></R>`),
		[]byte(`<!DOCTYPE R [<!ENTITY e "x">]><R>&e;</R>`))
	for _, c := range differentialCases {
		corpus = append(corpus, []byte(c))
	}
	for _, n := range []int{1, 3, 100} {
		corpus = append(corpus, loadgen.Packet(n, 2048, uint64(n)))
	}
	packet := strings.ReplaceAll(string(loadgen.Packet(5, 1024, 9)), "PCE", "Stück")
	latin1, err := charmap.ISO8859_1.NewEncoder().Bytes([]byte(strings.Replace(packet, "UTF-8", "ISO-8859-1", 1)))
	require.NoError(t, err)
	return append(corpus, []byte(packet), latin1)
}

// requireSameAsOracle parses body with Parse and with the parser it
// replaced, and requires the same document and the same error.
func requireSameAsOracle(t testing.TB, body []byte, charset string, limits Limits) {
	t.Helper()
	want, wantErr := oldParse(body, charset, limits)
	got, gotErr := Parse(body, charset, limits)
	require.Equal(t, wantErr, gotErr, "%q (charset %q, %+v)", body, charset, limits)
	got.views = nil // where the views are written, which the old parser did not say
	require.Equal(t, want, got, "%q (charset %q, %+v)", body, charset, limits)
}

var differentialLimits = []Limits{DefaultLimits, {MaxDepth: 16, MaxElements: 1000}, {MaxDepth: 4, MaxElements: 12},
	{MaxDepth: 16, MaxElements: 1000, MaxIDocs: 2}}

// Parse reads every document of the corpus, and every truncation and
// many corruptions of the small ones, exactly as the parser it replaced.
func TestParseMatchesOracle(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(1, 2))
	const corruptions = "<>/&;=\"' \n:x!?[]-\xc3\xff\x00"
	for _, body := range differentialCorpus(t) {
		for _, charset := range []string{"", "utf-8", "iso-8859-1"} {
			for _, limits := range differentialLimits {
				requireSameAsOracle(t, body, charset, limits)
			}
		}
		if len(body) > 10_000 {
			continue
		}
		// Every truncation of the small documents, some of the larger.
		for n := 0; n < len(body); n += 1 + len(body)/500 {
			requireSameAsOracle(t, body[:n], "", DefaultLimits)
		}
		for range min(len(body), 500) {
			corrupt := []byte(string(body))
			corrupt[rng.IntN(len(corrupt))] = corruptions[rng.IntN(len(corruptions))]
			requireSameAsOracle(t, corrupt, "", DefaultLimits)
		}
	}
}

// FuzzParseMatchesOracle holds Parse to the parser it replaced on
// arbitrary bytes.
func FuzzParseMatchesOracle(f *testing.F) {
	for _, body := range differentialCorpus(f) {
		if len(body) <= 10_000 {
			f.Add(body, "", uint8(0))
		}
	}
	f.Fuzz(func(t *testing.T, body []byte, charset string, limits uint8) {
		requireSameAsOracle(t, body, charset, differentialLimits[int(limits)%len(differentialLimits)])
	})
}

// The scanner reads the samples and the load generator's packets itself,
// without leaving them to encoding/xml.
func TestScannerReadsPlainDocuments(t *testing.T) {
	t.Parallel()
	bodies := [][]byte{loadgen.Packet(100, 2048, 1)}
	for _, name := range []string{"orders05.xml", "invoic02.xml", "orders05_packet.xml"} {
		b, err := os.ReadFile(filepath.Join("testdata", name))
		require.NoError(t, err)
		bodies = append(bodies, b)
	}
	for _, body := range bodies {
		p := parser{limits: DefaultLimits, maxElements: DefaultLimits.elementsFor(len(body)), scan: &scanner{in: body}}
		_, err := p.parse(body)
		require.NoError(t, err)
	}
}
