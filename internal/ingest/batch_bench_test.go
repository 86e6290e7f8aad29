package ingest_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/lefia/edihub/internal/delivery"
	"github.com/lefia/edihub/internal/ingest"
	"github.com/lefia/edihub/internal/loadgen"
	"github.com/lefia/edihub/internal/messagetype"
	"github.com/lefia/edihub/internal/pgtest"
	"github.com/lefia/edihub/internal/testfactory"
)

// BenchmarkReceiveBatch stores batches of 100 new ORDERS05 messages of
// 2 KiB, one after the other (make bench's batch row without HTTP and
// without concurrency): what one batch costs edihub and PostgreSQL, with
// no destination, and with two that take every message (200 deliveries and
// their jobs a batch).
func BenchmarkReceiveBatch(b *testing.B) {
	for _, destinations := range []int{0, 2} {
		b.Run(fmt.Sprintf("destinations=%d", destinations), func(b *testing.B) {
			pool := pgtest.Pool(b)
			tenant, env := testfactory.TenantWithEnvironment(b, pool, "acme")
			mt := testfactory.MessageType(b, pool, &testfactory.MessageTypeOpts{Fields: []string{"*.IDOC.E1EDK01.BELNR"}})
			for i := range destinations {
				testfactory.Destination(b, pool, testfactory.DestinationOpts{URL: fmt.Sprintf("http://127.0.0.1:9/%d", i)})
			}
			in := ingest.New(pool, time.Hour, delivery.NewService(pool, 3))
			doc := loadgen.NewDocument(2048)
			const perBatch = 100
			var n uint64
			for b.Loop() {
				batch := ingest.Batch{Items: make([]ingest.Request, perBatch)}
				for i := range batch.Items {
					n++
					batch.Items[i] = ingest.Request{TenantID: tenant.ID, EnvironmentID: env.ID, MessageType: messagetype.Prepare(mt), Payload: doc.Payload(n),
						Source: ingest.Source{Endpoint: ingest.EndpointReceiveMessages, RemoteAddr: "192.0.2.1", Actor: "bench"}}
				}
				if _, err := in.ReceiveBatch(context.Background(), batch); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.N*perBatch)/b.Elapsed().Seconds(), "messages/s")
		})
	}
}
