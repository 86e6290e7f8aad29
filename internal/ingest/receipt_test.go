package ingest

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// A receipt is written byte for byte as encoding/json writes it, so that an
// answer kept for a replay reads the same as one written before: escapes
// of HTML's characters, controls, quotes, U+2028 and U+2029, invalid UTF-8,
// a missing duplicate_of, null docnums and fingerprints, and nanoseconds.
func TestReceiptsAreWrittenAsEncodingJSONWritesThem(t *testing.T) {
	t.Parallel()
	holder := int64(7)
	texts := []string{"", "4500012345", "850", "a<b>&c", `say "hi" \ there`, "tab\tnew\nline\x00", "Stück",
		"line\u2028para\u2029", "bad \xff utf-8", "emoji 😀", "\x7f", "ZZ:SENDER*1~"}
	times := []time.Time{
		time.Date(2026, 12, 6, 2, 33, 22, 0, time.UTC),
		time.Date(2026, 12, 6, 2, 33, 22, 123456000, time.UTC),
		time.Date(1999, 1, 2, 3, 4, 5, 1, time.UTC),
	}
	for i, s := range texts {
		for _, received := range times {
			text := s
			for _, r := range []Receipt{
				{ID: int64(i), Status: "accepted", MessageType: s, Docnum: &text, Fingerprint: &text, ReceivedAt: received},
				{ID: -1, Status: s, Duplicate: true, DuplicateOf: &holder, MessageType: "ORDERS05", ReceivedAt: received},
			} {
				want, err := json.Marshal(r)
				require.NoError(t, err)
				require.Equal(t, string(want), string(encode(r)))
			}
		}
	}
}

func FuzzReceiptMatchesEncodingJSON(f *testing.F) {
	f.Add(int64(1), "accepted", "850", "4500012345", int64(1764988402123456789))
	f.Add(int64(-5), "dup<>&", "\u2028", "\xff\x00\"", int64(0))
	f.Fuzz(func(t *testing.T, id int64, status, code, docnum string, nanos int64) {
		r := Receipt{ID: id, Status: status, MessageType: code, Docnum: &docnum, Fingerprint: &status,
			ReceivedAt: time.Unix(0, nanos).UTC()}
		if id%2 == 0 {
			r.Duplicate, r.DuplicateOf, r.Fingerprint = true, &id, nil
		}
		want, err := json.Marshal(r)
		if err != nil {
			t.Skip("encoding/json refuses the time") // years outside 0 to 9999
		}
		require.Equal(t, string(want), string(encode(r)))
	})
}

func BenchmarkReceipt(b *testing.B) {
	docnum, fingerprint := "4500012345", "0b5f3a4f1c9e8d7b6a5f4e3d2c1b0a9f8e7d6c5b4a39281706f5e4d3c2b1a098"
	r := Receipt{ID: 123456789, Status: "accepted", MessageType: "850", Docnum: &docnum, Fingerprint: &fingerprint,
		ReceivedAt: time.Date(2026, 12, 6, 2, 33, 22, 123456000, time.UTC)}
	b.Run("encode", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			_ = encode(r)
		}
	})
	b.Run("encoding-json", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			_, _ = json.Marshal(r)
		}
	})
}

// A batch's answer is its items' receipts, each led by the item it
// answers, as encoding/json and fmt wrote it before.
func TestBatchBodyIsWrittenAsBefore(t *testing.T) {
	t.Parallel()
	oracle := func(ms []message, results []Result) string {
		var b strings.Builder
		b.WriteString(`{"messages":[`)
		for i, r := range results {
			if i > 0 {
				b.WriteByte(',')
			}
			docnum, err := json.Marshal(ms[i].docnumOrNull)
			require.NoError(t, err)
			fmt.Fprintf(&b, `{"item":{"position":%d,"docnum":%s},`, i+1, docnum)
			b.Write(r.Body[1:])
		}
		b.WriteString(`]}`)
		return b.String()
	}
	docnums := []string{"4500012345", "a<b>&c", "tab\t\"q\"", "bad \xff", "Stück"}
	var ms []message
	var results []Result
	for i := range 12 {
		m := message{}
		if i%6 != 5 {
			m.docnumOrNull = &docnums[i%len(docnums)]
		}
		ms = append(ms, m)
		results = append(results, created(m, int64(1000+i), time.Date(2026, 12, 6, 2, 33, 22, i*1000, time.UTC)))
		require.Equal(t, oracle(ms, results), string(batchBody(ms, results)))
	}
}
