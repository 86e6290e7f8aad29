package fingerprint_test

import (
	"crypto/sha256"
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/lefia/edihub/internal/canon"
	"github.com/lefia/edihub/internal/envelope"
	"github.com/lefia/edihub/internal/fingerprint"
)

// benchSizes are a typical IDoc, a large one, and one near the default
// MAX_BODY_BYTES.
var benchSizes = []struct {
	name string
	size int
}{
	{"2KiB", 2 << 10},
	{"100KiB", 100 << 10},
	{"5MiB", 5 << 20},
}

// benchPaths reads a header field, the PO number through a query, and the
// summary segment at the very end of the document, so that gjson scans it
// all.
var benchPaths = []string{belnrPath, poPath, "*.IDOC.E1EDS01"}

func TestOrders05Payload(t *testing.T) {
	t.Parallel()
	for _, s := range benchSizes[:2] {
		p := orders05Payload(s.size)
		require.True(t, json.Valid(p))
		require.GreaterOrEqual(t, len(p), s.size)
		require.Less(t, len(p), s.size+1024)
		res, err := fingerprint.Compute(fingerprint.Input{MessageTypeID: 42, Paths: benchPaths, Payload: p})
		require.NoError(t, err)
		require.Equal(t, hexOf(`["42","4500012345","4500012345",{"@SEGMENT":"1","SUMID":"002","SUMME":"1432.80","SUNIT":"BRL"}]`), res.Fingerprint)
	}
}

func BenchmarkCompute(b *testing.B) {
	benchEachSize(b, func(p []byte) error {
		_, err := fingerprint.Compute(fingerprint.Input{MessageTypeID: 42, Paths: benchPaths, Docnum: "0000000000900101", Payload: p})
		return err
	})
}

// BenchmarkContentHash lives here rather than in package canon so that the
// payload generator exists once.
func BenchmarkContentHash(b *testing.B) {
	benchEachSize(b, func(p []byte) error {
		_, err := canon.ContentHash(p)
		return err
	})
}

// BenchmarkEnvelopeParse is the JSON work before any hashing: checking the
// receive-message envelope around the payload and finding its members.
func BenchmarkEnvelopeParse(b *testing.B) {
	for _, s := range benchSizes {
		body := append(append([]byte(`{"message_type":"ORDERS05","docnum":"0000000000900101","payload":`), orders05Payload(s.size)...), '}')
		b.Run(s.name, func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(body)))
			for b.Loop() {
				if _, err := envelope.Parse(body); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkBatchParse is the same work for a receive-messages body of 100
// envelopes of 2 KiB payloads.
func BenchmarkBatchParse(b *testing.B) {
	item := []byte(`{"message_type":"ORDERS05","docnum":"0000000000900101","payload":` + string(orders05Payload(2<<10)) + `}`)
	body := []byte(`{"messages":[`)
	for i := range 100 {
		if i > 0 {
			body = append(body, ',')
		}
		body = append(body, item...)
	}
	body = append(body, "]}"...)
	b.ReportAllocs()
	b.SetBytes(int64(len(body)))
	for b.Loop() {
		items, err := envelope.ParseBatch(body, 100)
		if err != nil || items[99].Err != nil {
			b.Fatal(err, items[99].Err)
		}
	}
}

// BenchmarkRawSHA256 is the floor: hashing the same bytes without reading
// them as JSON.
func BenchmarkRawSHA256(b *testing.B) {
	benchEachSize(b, func(p []byte) error {
		sha256.Sum256(p)
		return nil
	})
}

// benchEachSize runs op on an ORDERS05 payload of each of benchSizes,
// reporting throughput and allocations.
func benchEachSize(b *testing.B, op func(payload []byte) error) {
	for _, s := range benchSizes {
		p := orders05Payload(s.size)
		b.Run(s.name, func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(p)))
			for b.Loop() {
				if err := op(p); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
