package idocxml_test

import (
	"runtime"
	"strings"
	"testing"

	"github.com/lefia/edihub/internal/idocxml"
	"github.com/lefia/edihub/internal/loadgen"
)

// BenchmarkParsePacket parses the packet the load generator posts in its
// packet form, 100 IDocs of about 2 KiB each, and writes each IDoc's own
// document, as the server does before releasing the packet.
func BenchmarkParsePacket(b *testing.B) {
	body := loadgen.Packet(100, 2048, 1)
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	for b.Loop() {
		doc, err := idocxml.Parse(body, "", idocxml.DefaultLimits)
		if err != nil || len(doc.IDocs) != 100 {
			b.Fatal(len(doc.IDocs), err)
		}
		for _, idoc := range doc.IDocs {
			_ = doc.Own(body, idoc)
		}
		doc.Release()
	}
}

// denseIDoc is the IDoc of the hostile document the issue measured: a
// control record and then n empty elements, <a/>, four bytes each (5.8 MB
// for 1,449,000 of them).
func denseIDoc(n int) []byte {
	return idocOfRepeated("<a/>", n)
}

// idocOfRepeated is an IDoc of a control record and then n times element.
func idocOfRepeated(element string, n int) []byte {
	return []byte(`<ORDERS05><IDOC BEGIN="1"><EDI_DC40 SEGMENT="1"><DOCNUM>1</DOCNUM></EDI_DC40><E1 SEGMENT="1">` +
		strings.Repeat(element, n) + `</E1></IDOC></ORDERS05>`)
}

// BenchmarkParseDenseIDoc reports what the densest IDoc a body can carry
// costs to read, as bytes allocated for each byte of the body
// (alloc-B/byte) beside the load generator's packet of real IDocs: what
// the body budget, which counts bytes, must be able to answer for.
func BenchmarkParseDenseIDoc(b *testing.B) {
	bodies := map[string][]byte{
		"dense":  denseIDoc(1_449_000),
		"packet": loadgen.Packet(1000, 5800, 1),
		// The densest document DefaultLimits accept, of the same size.
		"densest": idocOfRepeated("<ab>1</ab>", 579_000),
	}
	for _, name := range []string{"dense", "packet", "densest"} {
		body := bodies[name]
		b.Run(name, func(b *testing.B) {
			b.SetBytes(int64(len(body)))
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			for b.Loop() {
				_, _ = idocxml.Parse(body, "", idocxml.DefaultLimits)
			}
			runtime.ReadMemStats(&after)
			b.ReportMetric(float64(after.TotalAlloc-before.TotalAlloc)/float64(b.N)/float64(len(body)), "alloc-B/byte")
		})
	}
}
