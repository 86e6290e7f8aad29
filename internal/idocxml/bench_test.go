package idocxml_test

import (
	"testing"

	"github.com/lefia/edihub/internal/idocxml"
	"github.com/lefia/edihub/internal/loadgen"
)

// BenchmarkParsePacket parses the packet the load generator posts in its
// packet form: 100 IDocs of about 2 KiB each.
func BenchmarkParsePacket(b *testing.B) {
	body := loadgen.Packet(100, 2048, 1)
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	for b.Loop() {
		doc, err := idocxml.Parse(body, "", idocxml.DefaultLimits)
		if err != nil || len(doc.IDocs) != 100 {
			b.Fatal(len(doc.IDocs), err)
		}
	}
}
