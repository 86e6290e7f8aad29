package delivery_test

import (
	"context"
	"net/http"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/lefia/edihub/internal/delivery"
	"github.com/lefia/edihub/internal/pgtest"
)

// Database backends killed while two worker processes deliver, their
// bookkeeping committed without waiting for the disk: every message
// reaches the destination, a repeat only with the same webhook-id, never
// more at once than the destination's limit across both processes, and
// every delivery ends delivered once the kills stop.
func TestDeliveriesSurviveKilledBackends(t *testing.T) {
	t.Parallel()
	b := setup(t)
	const limit = 3
	var inFlight, maxInFlight atomic.Int64
	rc := newReceiver(t, func(*http.Request) int {
		n := inFlight.Add(1)
		defer inFlight.Add(-1)
		for m := maxInFlight.Load(); n > m && !maxInFlight.CompareAndSwap(m, n); m = maxInFlight.Load() {
		}
		time.Sleep(5 * time.Millisecond)
		return http.StatusOK
	})
	destination := b.limitedDestination(t, rc.srv.URL, limit)
	const messages = 150
	ids := make([]int64, messages)
	for i := range messages {
		ids[i] = b.receive(t, "production", "ORDERS05", strconv.Itoa(i)).MessageID
	}

	// The processes start before the kills: one that cannot read the
	// destinations as it starts stops with the error.
	b.run(t)
	b.run(t)
	require.Eventually(t, func() bool { return rc.total() > 0 }, 30*time.Second, 10*time.Millisecond)

	admin := pgtest.PoolFor(t, pgtest.ServerURL())
	name := b.pool.Config().ConnConfig.Database
	ctx, stopKilling := context.WithCancel(context.Background())
	killed := atomic.Int64{}
	done := make(chan struct{})
	go func() {
		defer close(done)
		for ctx.Err() == nil {
			var n int64
			if err := admin.QueryRow(ctx, `SELECT count(*) FILTER (WHERE pg_terminate_backend(pid))
				FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()`, name).Scan(&n); err == nil {
				killed.Add(n)
			}
			time.Sleep(100 * time.Millisecond)
		}
	}()
	time.Sleep(3 * time.Second)
	stopKilling()
	<-done
	require.Positive(t, killed.Load(), "backends were killed while delivering")
	t.Logf("%d backends killed in 3 s", killed.Load())

	// A job whose completion a kill lost stays running in River's table
	// until River rescues it: RescueStuckJobsAfter (the job's 35 s timeout
	// and a minute) plus the rescuer's own interval, about two minutes.
	require.Eventually(t, func() bool {
		return b.count(t, `SELECT count(*) FROM deliveries WHERE status = 'pending'`) == 0
	}, 200*time.Second, 50*time.Millisecond, "every delivery is made once the kills stop")
	require.Equal(t, messages, b.count(t, `SELECT count(*) FROM deliveries WHERE status = 'delivered'`))
	counts := rc.counts()
	require.Len(t, counts, messages, "every message reaches the destination, each under its own webhook-id")
	for _, id := range ids {
		require.Positive(t, counts[delivery.WebhookID(id, destination)])
	}
	require.LessOrEqual(t, maxInFlight.Load(), int64(limit), "never more than the limit at once, across both processes")
	t.Logf("%d requests for %d messages", rc.total(), messages)
	rc.mu.Lock()
	defer rc.mu.Unlock()
	require.Empty(t, rc.bad, "every request is signed")
}
