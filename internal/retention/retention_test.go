package retention_test

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"regexp"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"

	"github.com/lefia/edihub/internal/auditpartition"
	"github.com/lefia/edihub/internal/config"
	"github.com/lefia/edihub/internal/db"
	"github.com/lefia/edihub/internal/pgtest"
	"github.com/lefia/edihub/internal/retention"
	"github.com/lefia/edihub/internal/testfactory"
)

// seedKeys stores expired and live keys in one environment.
func seedKeys(t *testing.T, pool *pgxpool.Pool, expired, live int) {
	t.Helper()
	ctx := context.Background()
	_, env := testfactory.TenantWithEnvironment(t, pool, "acme")
	_, err := pool.Exec(ctx, `
		INSERT INTO idempotency_keys (tenant_id, environment_id, scope, key, request_hash, expires_at)
		SELECT $2, $3, '', 'expired-' || i, sha256(i::text::bytea), now() - interval '1 minute'
		FROM generate_series(1, $1) i`, expired, env.TenantID, env.ID)
	require.NoError(t, err)
	_, err = pool.Exec(ctx, `
		INSERT INTO idempotency_keys (tenant_id, environment_id, scope, key, request_hash, expires_at)
		SELECT $2, $3, '', 'live-' || i, sha256(i::text::bytea), now() + interval '1 hour'
		FROM generate_series(1, $1) i`, live, env.TenantID, env.ID)
	require.NoError(t, err)
}

func count(t *testing.T, pool *pgxpool.Pool, where string) int {
	t.Helper()
	return pgtest.Count(t, pool, `SELECT count(*) FROM idempotency_keys WHERE `+where)
}

func TestSweepDeletesExpiredKeysInBatches(t *testing.T) {
	t.Parallel()
	pool := pgtest.Pool(t)
	seedKeys(t, pool, 2345, 100)

	removed, err := retention.NewSweeper(pool, slog.New(slog.NewTextHandler(io.Discard, nil)), 500, time.Minute, retention.Policy{}).
		Sweep(context.Background())
	require.NoError(t, err)
	require.Equal(t, int64(2345), removed[retention.IdempotencyKeys])
	require.Equal(t, 0, count(t, pool, `expires_at <= now()`))
	require.Equal(t, 100, count(t, pool, `true`), "live keys stay")
}

// A key that a request holds locked is skipped, not waited for: the sweep
// never blocks ingest, and the locked key goes in a later round.
func TestSweepSkipsLockedKeys(t *testing.T) {
	t.Parallel()
	pool := pgtest.Pool(t)
	seedKeys(t, pool, 10, 0)
	ctx := context.Background()

	tx, err := pool.Begin(ctx)
	require.NoError(t, err)
	_, err = tx.Exec(ctx, `SELECT 1 FROM idempotency_keys WHERE key = 'expired-1' FOR UPDATE`)
	require.NoError(t, err)

	sweeper := retention.NewSweeper(pool, slog.New(slog.NewTextHandler(io.Discard, nil)), 3, time.Minute, retention.Policy{})
	sweepCtx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	removed, err := sweeper.Sweep(sweepCtx)
	require.NoError(t, err, "the sweep does not wait for the locked key")
	require.Equal(t, int64(9), removed[retention.IdempotencyKeys])
	require.NoError(t, tx.Rollback(ctx))

	removed, err = sweeper.Sweep(ctx)
	require.NoError(t, err)
	require.Equal(t, int64(1), removed[retention.IdempotencyKeys])
}

func TestRunSweepsUntilCancelled(t *testing.T) {
	t.Parallel()
	pool := pgtest.Pool(t)
	seedKeys(t, pool, 50, 0)
	var logs bytes.Buffer
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	var reported atomic.Int64
	sweeper := retention.NewSweeper(pool, slog.New(slog.NewTextHandler(&logs, nil)), 20, 10*time.Millisecond, retention.Policy{})
	sweeper.OnSweep = func(kind retention.Kind, deleted int64, err error) {
		if err != nil {
			t.Errorf("sweep failed: %v", err)
		}
		if kind != retention.IdempotencyKeys {
			t.Errorf("%s swept: the policy keeps every kind but keys forever", kind)
		}
		reported.Add(deleted)
	}
	go func() {
		sweeper.Run(ctx)
		close(done)
	}()
	// The keys may go in one round or in several (a batch can come back
	// short under load, which ends a round), so the rounds are summed.
	require.Eventually(t, func() bool { return reported.Load() == 50 }, 5*time.Second, 10*time.Millisecond,
		"every round is reported, for the metrics")
	cancel()
	<-done
	require.Zero(t, count(t, pool, `true`))
	var logged int64
	for _, m := range regexp.MustCompile(`idempotency_keys_deleted=(\d+)`).FindAllStringSubmatch(logs.String(), -1) {
		n, err := strconv.ParseInt(m[1], 10, 64)
		require.NoError(t, err)
		logged += n
	}
	require.Equal(t, int64(50), logged, "every round that deleted keys is logged")
}

// Every round also keeps audit_events' partitions: the months ahead are
// added, reported for the metrics and logged.
func TestRunMaintainsAuditPartitions(t *testing.T) {
	t.Parallel()
	pool := pgtest.Pool(t)
	var logs bytes.Buffer
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	reports := make(chan auditpartition.Result, 100)
	sweeper := retention.NewSweeper(pool, slog.New(slog.NewTextHandler(&logs, nil)), 20, 10*time.Millisecond,
		retention.Policy{Periods: config.Retention{AuditEvents: 365 * 24 * time.Hour}})
	sweeper.OnAuditPartitions = func(r auditpartition.Result, err error) {
		if err != nil {
			t.Errorf("maintenance failed: %v", err)
		}
		reports <- r
	}
	go func() {
		sweeper.Run(ctx)
		close(done)
	}()
	first := <-reports
	second := <-reports
	cancel()
	<-done
	require.NotEmpty(t, first.Created, "the months ahead of the migration's partition")
	require.Empty(t, second.Created, "added once")
	require.Equal(t, len(first.Created), pgtest.Count(t, pool,
		`SELECT count(*) FROM pg_inherits WHERE inhparent = 'audit_events'::regclass AND inhrelid <> 'audit_events_legacy'::regclass`))
	require.Contains(t, logs.String(), "audit_events partitions")
	require.Contains(t, logs.String(), first.Created[0])
	require.Equal(t, 1, pgtest.Count(t, pool,
		`SELECT count(*) FROM retention_sweeps WHERE kind = 'audit_events' AND removed = 0 AND error = ''`),
		"the round is kept for the admin: no month is old enough to drop")
}

// Each kind's record counts the rounds that failed in a row, which a
// round that succeeds sets back to none (housekeeping.failing).
func TestRecordCountsFailedRoundsInARow(t *testing.T) {
	t.Parallel()
	pool := pgtest.Pool(t)
	ctx := context.Background()
	q := db.On(pool)
	record := func(kind, errText string) {
		require.NoError(t, q.RetentionSweepRecord(ctx, db.RetentionSweepRecordParams{Kind: kind, Error: errText}))
	}
	for range 3 {
		record("messages", "deadlock detected")
	}
	record("idempotency_keys", "")
	failing, err := q.RetentionSweepListFailing(ctx, 3)
	require.NoError(t, err)
	require.Len(t, failing, 1)
	require.Equal(t, "messages", failing[0].Kind)
	require.EqualValues(t, 3, failing[0].FailedRounds)

	record("messages", "")
	failing, err = q.RetentionSweepListFailing(ctx, 1)
	require.NoError(t, err)
	require.Empty(t, failing)
}
