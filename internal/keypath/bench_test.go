package keypath_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/tidwall/gjson"

	"github.com/lefia/edihub/internal/keypath"
)

// itemsPayload is an order of about size bytes: an id and as many items as
// fill it, the shape that gives fan-outs and queries the most to do.
func itemsPayload(size int) []byte {
	var b strings.Builder
	b.Grow(size + 128)
	b.WriteString(`{"id":"ORDER-1","items":[`)
	for n := 0; b.Len() < size; n++ {
		if n > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `{"sku":"SKU-%07d","qty":%d,"E1EDP19":{"QUALF":"00%d","IDTNR":"MAT-%07d"}}`, n, n%9+1, n%3, n)
	}
	b.WriteString(`]}`)
	return []byte(b.String())
}

// worstPaths are the most expensive paths the grammar accepts that we know
// of: queries and fan-outs over every element, queries nested in queries,
// stages that each read a value as large as the payload, and copies of the
// whole payload (refused after one read by the multipath's value limit).
// Each is within MaxCost; the benchmark reports how their cost compares
// with reading the payload once.
var worstPaths = map[string]string{
	"query chains":  `[items.#(qty>100).sku,items.#(qty<0).sku]|@flatten`,
	"nested query":  `items.#(E1EDP19.#(QUALF!="x"))#.sku`,
	"query stages":  `items.#(qty>0)#|#(qty>0)`,
	"flatten":       `items|@flatten|@flatten|@flatten`,
	"fan-outs":      `[items.#.E1EDP19.QUALF,items.#.sku]|@flatten`,
	"whole payload": `[items,items,items,items]|@flatten`,
}

// worstType is the most expensive set of paths one message type may have
// (MaxTypeCost): two of the worst paths.
var worstType = []string{`[items.#(qty>100).sku,items.#(qty<0).sku]|@flatten`, `items.#(qty>0)#|#(qty>0)`}

var benchSizes = []struct {
	name string
	size int
}{{"1MiB", 1 << 20}, {"10MiB", 10 << 20}}

// BenchmarkReadOnce is the yardstick: validating the payload, one read.
func BenchmarkReadOnce(b *testing.B) {
	for _, s := range benchSizes {
		benchRead(b, s.name, itemsPayload(s.size), func(b *testing.B, payload []byte) {
			if !gjson.ValidBytes(payload) {
				b.Fatal("invalid payload")
			}
		})
	}
}

// BenchmarkWorstPath evaluates each worst path; a value beyond the limits
// is refused after the work is done, which is the cost measured.
func BenchmarkWorstPath(b *testing.B) {
	for name, text := range worstPaths {
		p, err := keypath.Parse(text)
		if err != nil {
			b.Fatal(err)
		}
		for _, s := range benchSizes {
			benchRead(b, fmt.Sprintf("%s/cost=%d/%s", name, p.Cost(), s.name), itemsPayload(s.size), func(_ *testing.B, payload []byte) {
				_, _ = p.Get(payload)
			})
		}
	}
}

// BenchmarkWorstType evaluates the paths of the most expensive type, as
// ingest does for every message.
func BenchmarkWorstType(b *testing.B) {
	paths := make([]keypath.Path, len(worstType))
	for i, text := range worstType {
		paths[i] = mustParse(b, text)
	}
	if err := keypath.CheckTypeCost(paths); err != nil {
		b.Fatal(err)
	}
	for _, s := range benchSizes {
		benchRead(b, s.name, itemsPayload(s.size), func(_ *testing.B, payload []byte) {
			for _, p := range paths {
				_, _ = p.Get(payload)
			}
		})
	}
}

// benchRead runs read on payload as sub-benchmark name, reporting
// throughput and allocations.
func benchRead(b *testing.B, name string, payload []byte, read func(b *testing.B, payload []byte)) {
	b.Run(name, func(b *testing.B) {
		b.ReportAllocs()
		b.SetBytes(int64(len(payload)))
		for b.Loop() {
			read(b, payload)
		}
	})
}
