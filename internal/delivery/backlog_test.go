package delivery_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/lefia/edihub/internal/delivery"
	"github.com/lefia/edihub/internal/pgtest"
)

// A destination's queue is read from two ranges of partial indexes, never
// from the whole deliveries table, on a generic plan made without
// statistics (the tables are never analyzed), and says what waits, since
// when, and how fast the destination is served.
func TestBacklogsReadIndexRangesOnly(t *testing.T) {
	t.Parallel()
	b := setup(t)
	rc := newReceiver(t, nil)
	behind := b.destination(t, "production", rc.srv.URL)
	served := b.destination(t, "sandbox", rc.srv.URL)
	idle := b.destination(t, "sandbox", rc.srv.URL, "INVOIC02")
	for i := range 30 {
		b.receive(t, "production", "ORDERS05", "p"+string(rune('a'+i)))
		b.receive(t, "sandbox", "ORDERS05", "s"+string(rune('a'+i)))
	}
	b.exec(t, `UPDATE deliveries SET created_at = now() - interval '5 minutes' WHERE destination_id = $1`, behind)
	b.exec(t, `UPDATE deliveries SET status = 'delivered', delivered_at = now() - interval '1 second' WHERE destination_id = $1`, served)

	pool, traced := pgtest.TracedPool(t, b.pool.Config().ConnString(), "name: DeliveryBacklogOfDestinations")
	backlogs, err := delivery.NewService(pool, 3).Backlogs(context.Background(), []int64{behind, served, idle})
	require.NoError(t, err)
	require.Equal(t, int64(30), backlogs[behind].Pending)
	require.False(t, backlogs[behind].Capped)
	require.InDelta(t, 5*time.Minute, backlogs[behind].Oldest, float64(time.Minute))
	require.Zero(t, backlogs[behind].PerSecond)
	require.Zero(t, backlogs[served].Pending)
	require.Zero(t, backlogs[served].Oldest)
	require.InDelta(t, 30.0/60, backlogs[served].PerSecond, 0.01)
	require.Equal(t, delivery.Backlog{}, backlogs[idle])

	scans, raw := traced.ExplainGeneric(t, pool)
	require.NotContains(t, scans, "Seq Scan on deliveries", "%s", raw)
	require.Subset(t, scans, []string{"deliveries_destination_pending", "deliveries_destination_delivered"}, "%s", raw)
}
