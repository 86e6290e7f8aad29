package delivery_test

import (
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/lefia/edihub/internal/delivery"
	"github.com/lefia/edihub/internal/provision"
)

// BenchmarkDelivery stores b.N messages from 8 concurrent clients, each
// owed to one destination (a local receiver answering at once), while one
// worker process delivers them, at the default concurrency limit and at
// 32. It reports messages stored per second, from the first to the last
// answer, deliveries per second, from the first message stored to the last
// one received, and the lag from each
// message's ingest answer to its first attempt arriving at the receiver
// (p50, p99). Run it with a fixed count: -benchtime=2000x.
func BenchmarkDelivery(b *testing.B) {
	for _, limit := range []int32{provision.DefaultMaxConcurrency, 32} {
		b.Run(fmt.Sprintf("limit=%d", limit), func(b *testing.B) { benchmarkDelivery(b, limit) })
	}
}

func benchmarkDelivery(b *testing.B, limit int32) {
	tb := setup(b)
	rc := newReceiver(b, nil)
	destination := tb.limitedDestination(b, rc.srv.URL, limit)
	tb.run(b)
	// Let the worker find the destination's queue before the clock starts.
	time.Sleep(3 * tb.cfg.SyncInterval)

	answered := make([]time.Time, b.N)
	ids := make([]string, b.N)
	next := make(chan int)
	var wg sync.WaitGroup
	b.ResetTimer()
	start := time.Now()
	for range 8 {
		wg.Go(func() {
			for i := range next {
				res := tb.receive(b, "production", "ORDERS05", fmt.Sprint(i))
				answered[i] = time.Now()
				ids[i] = delivery.WebhookID(res.MessageID, destination)
			}
		})
	}
	for i := range b.N {
		next <- i
	}
	close(next)
	wg.Wait()
	require.Eventually(b, func() bool { return rc.total() >= b.N }, 5*time.Minute, 10*time.Millisecond)
	b.StopTimer()

	rc.mu.Lock()
	defer rc.mu.Unlock()
	lags := make([]time.Duration, b.N)
	last := start
	for i, id := range ids {
		at := rc.first[id]
		lags[i] = at.Sub(answered[i])
		if at.After(last) {
			last = at
		}
	}
	slices.Sort(lags)
	stored := slices.MaxFunc(answered, func(x, y time.Time) int { return x.Compare(y) })
	b.ReportMetric(float64(b.N)/stored.Sub(start).Seconds(), "stored/s")
	b.ReportMetric(float64(b.N)/last.Sub(start).Seconds(), "deliveries/s")
	b.ReportMetric(float64(lags[len(lags)/2].Microseconds())/1000, "p50-lag-ms")
	b.ReportMetric(float64(lags[len(lags)*99/100].Microseconds())/1000, "p99-lag-ms")
	b.ReportMetric(0, "ns/op")
}

// BenchmarkDeliveryDrain stores b.N messages first and then measures how
// fast one worker process delivers them to a local receiver: the delivery
// side alone, without ingest competing for the machine.
func BenchmarkDeliveryDrain(b *testing.B) {
	tb := setup(b)
	rc := newReceiver(b, nil)
	tb.limitedDestination(b, rc.srv.URL, 32)
	for i := range b.N {
		tb.receive(b, "production", "ORDERS05", fmt.Sprint(i))
	}
	b.ResetTimer()
	start := time.Now()
	tb.run(b)
	require.Eventually(b, func() bool { return rc.total() >= b.N }, 5*time.Minute, 10*time.Millisecond)
	b.StopTimer()
	b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "deliveries/s")
	b.ReportMetric(0, "ns/op")
}
