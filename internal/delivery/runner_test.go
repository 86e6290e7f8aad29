package delivery_test

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"

	"github.com/lefia/edihub/internal/config"
	"github.com/lefia/edihub/internal/delivery"
)

// startRunner runs a worker process on a pool of its own, so that the
// database work it does can be counted apart from the test's.
func (b *testBundle) startRunner(t testing.TB) (*delivery.Runner, *pgxpool.Pool) {
	t.Helper()
	pool, err := pgxpool.New(context.Background(), b.pool.Config().ConnString())
	require.NoError(t, err)
	t.Cleanup(pool.Close) // after the runner stops: cleanups run last first
	return b.runOn(t, pool), pool
}

func (b *testBundle) exec(t testing.TB, sql string, args ...any) {
	t.Helper()
	_, err := b.pool.Exec(context.Background(), sql, args...)
	require.NoError(t, err)
}

// Idle destinations cost nothing: a worker process runs a destination's
// queue only while the destination has pending deliveries. Before, every
// destination's queue polled the database about once a second, so 300 idle
// destinations took some 300 connections a second from the pool.
func TestIdleDestinationsCostNothing(t *testing.T) {
	t.Parallel()
	b := setup(t)
	// Only River's announcement can start a queue within the test: the
	// sweep runs once, at the start.
	b.cfg.SyncInterval = time.Hour
	rc := newReceiver(t, nil)
	busy := b.destination(t, "production", rc.srv.URL)
	// More than a tenant may create, so written directly.
	b.exec(t, `INSERT INTO destinations (tenant_id, environment_id, url, secret)
		SELECT $1, $2, $3, $4 FROM generate_series(1, 299)`, b.tenantID, b.envs["sandbox"], rc.srv.URL, testSecret)
	runner, pool := b.startRunner(t)
	acquires := func() int64 { return pool.Stat().AcquireCount() + runner.AcquireCount() }
	time.Sleep(time.Second)
	before := acquires()
	time.Sleep(3 * time.Second)
	acquired := acquires() - before
	t.Logf("300 idle destinations: %d connections taken from the pool in 3 s", acquired)
	require.Less(t, acquired, int64(30), "idle destinations take no connections")
	require.Zero(t, runner.RunningQueues())

	// A message for one of them is delivered at once: River's announcement
	// of its job starts its queue.
	start := time.Now()
	b.receive(t, "production", "ORDERS05", "1")
	require.Eventually(t, func() bool { return rc.total() == 1 }, 10*time.Second, 10*time.Millisecond)
	t.Logf("delivered %s after it was stored", time.Since(start).Round(time.Millisecond))
	require.Equal(t, 1, runner.RunningQueues(), "only the destination with work runs a queue")
	require.Eventually(t, func() bool {
		return b.count(t, `SELECT count(*) FROM deliveries WHERE destination_id = $1 AND status = 'delivered'`, busy) == 1
	}, 10*time.Second, 10*time.Millisecond)
}

// A queue stops once its destination has had no pending delivery for a
// sweep, and a destination deleted is no longer worked, without a restart.
func TestQueuesStopWhenIdleOrDeleted(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.cfg.SyncInterval = 200 * time.Millisecond
	rc := newReceiver(t, nil)
	kept := b.destination(t, "production", rc.srv.URL)
	paused := b.destination(t, "production", rc.srv.URL)
	b.exec(t, `UPDATE destinations SET paused = true WHERE id = $1`, paused)
	runner, _ := b.startRunner(t)
	b.receive(t, "production", "ORDERS05", "1")
	require.Eventually(t, func() bool { return rc.total() == 1 }, 10*time.Second, 10*time.Millisecond)
	require.Equal(t, 1, b.count(t, `SELECT count(*) FROM deliveries WHERE destination_id = $1 AND status = 'pending'`, paused))
	require.Eventually(t, func() bool { return runner.RunningQueues() == 1 }, 10*time.Second, 10*time.Millisecond,
		"the delivered destination's queue stops; the paused one, with a pending delivery, runs")

	b.exec(t, `DELETE FROM deliveries WHERE destination_id = $1`, paused)
	b.exec(t, `DELETE FROM destinations WHERE id = $1`, paused)
	require.Eventually(t, func() bool { return runner.RunningQueues() == 0 }, 10*time.Second, 10*time.Millisecond,
		"the deleted destination's queue stops")
	b.receive(t, "production", "ORDERS05", "2")
	require.Eventually(t, func() bool { return rc.total() == 2 }, 10*time.Second, 10*time.Millisecond)
	require.Eventually(t, func() bool {
		return b.count(t, `SELECT count(*) FROM deliveries WHERE destination_id = $1 AND status = 'delivered'`, kept) == 2
	}, 10*time.Second, 10*time.Millisecond)
}

// A worker started while the database is away waits for it instead of
// exiting: Run goes on trying until it is stopped, and then returns
// cleanly.
func TestRunnerStartedWithoutDatabaseWaits(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	away := ln.Addr().String()
	require.NoError(t, ln.Close()) // nothing listens there now
	pool, err := pgxpool.New(context.Background(), "postgres://postgres@"+away+"/edihub?connect_timeout=1")
	require.NoError(t, err)
	t.Cleanup(pool.Close)
	runner, err := delivery.NewRunner(pool, config.Delivery{Timeout: time.Second, MaxAttempts: 2, SyncInterval: time.Second},
		time.Second, slog.New(slog.DiscardHandler), nil)
	require.NoError(t, err)

	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- runner.Run(ctx) }()
	select {
	case err := <-done:
		t.Fatalf("Run returned while the database was away: %v", err)
	case <-time.After(2500 * time.Millisecond):
	}
	cancel()
	require.NoError(t, <-done)
}

// A delivery whose job River discarded (its last attempt ended before it
// was recorded, or its process died and River rescued the job) is failed
// by the next worker process's sweep, so that it shows and alerts as a
// failure instead of staying pending with nothing to make it; one that an
// admin's retry queued again stays pending for its new job.
func TestDeliveriesOfDiscardedJobsFail(t *testing.T) {
	t.Parallel()
	b := setup(t)
	rc := newReceiver(t, nil)
	b.destination(t, "production", rc.srv.URL)
	for i := range 3 {
		b.receive(t, "production", "ORDERS05", fmt.Sprint(i))
	}
	rows, err := b.pool.Query(context.Background(), `SELECT id FROM deliveries ORDER BY id`)
	require.NoError(t, err)
	ids, err := pgx.CollectRows(rows, pgx.RowTo[int64])
	require.NoError(t, err)
	require.Len(t, ids, 3)
	discarded, retried, untouched := ids[0], ids[1], ids[2]
	b.exec(t, `UPDATE river_job SET state = 'discarded', finalized_at = now(), attempt = max_attempts
		WHERE kind = 'delivery' AND (args->>'delivery_id')::bigint = ANY($1)`, []int64{discarded, retried})
	b.exec(t, `INSERT INTO river_job (args, kind, max_attempts, queue, state, scheduled_at, priority)
		SELECT args, kind, max_attempts, queue, 'scheduled', now() + interval '1 hour', priority
		FROM river_job WHERE kind = 'delivery' AND (args->>'delivery_id')::bigint = $1`, retried)

	b.run(t)
	require.Eventually(t, func() bool {
		return b.count(t, `SELECT count(*) FROM deliveries WHERE id = $1 AND status = 'failed'`, discarded) == 1 &&
			b.count(t, `SELECT count(*) FROM deliveries WHERE id = $1 AND status = 'delivered'`, untouched) == 1
	}, 20*time.Second, 50*time.Millisecond)
	require.Equal(t, 1, b.count(t, `SELECT count(*) FROM deliveries WHERE id = $1 AND status = 'pending'`, retried),
		"a delivery with a job still to run is left to it")
	require.Equal(t, 1, rc.total(), "only the untouched delivery was sent")
}
