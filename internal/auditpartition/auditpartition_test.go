package auditpartition_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"

	"github.com/lefia/edihub/internal/auditpartition"
	"github.com/lefia/edihub/internal/pgtest"
	"github.com/lefia/edihub/internal/testfactory"
)

const year = 365 * 24 * time.Hour

// partitions are audit_events' partitions, oldest first, with the end of
// each one's range.
func partitions(t *testing.T, pool *pgxpool.Pool) (names []string, ends []time.Time) {
	t.Helper()
	rows, err := pool.Query(context.Background(), `
		SELECT c.relname, (regexp_match(pg_get_expr(c.relpartbound, c.oid), 'TO \(''([^'']+)''\)'))[1]::timestamptz
		FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid
		WHERE i.inhparent = 'audit_events'::regclass ORDER BY 2`)
	require.NoError(t, err)
	defer rows.Close()
	for rows.Next() {
		var name string
		var end time.Time
		require.NoError(t, rows.Scan(&name, &end))
		names, ends = append(names, name), append(ends, end)
	}
	require.NoError(t, rows.Err())
	return names, ends
}

// event writes an audit event created at the given time and returns its id.
func event(t *testing.T, pool *pgxpool.Pool, at time.Time) int64 {
	t.Helper()
	var id int64
	require.NoError(t, pool.QueryRow(context.Background(), `
		INSERT INTO audit_events (action, actor, created_at) VALUES ('user.created', 'cli', $1) RETURNING id`, at).Scan(&id))
	return id
}

// A fresh database has only the partition of everything up to a month or
// two ahead (migration 015); Maintain adds whole UTC months until they
// reach Ahead past now, once however often it runs, and an insert at any
// time up to there finds its partition.
func TestMaintainAddsMonthsAhead(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool := pgtest.Pool(t)
	names, ends := partitions(t, pool)
	require.Equal(t, []string{"audit_events_legacy"}, names)
	now := time.Now()
	require.True(t, ends[0].After(now.AddDate(0, 1, 0)), "the migration covers a month or more: %s", ends[0])

	r, err := auditpartition.Maintain(ctx, pool, now, 0)
	require.NoError(t, err)
	names, ends = partitions(t, pool)
	require.Equal(t, names[1:], r.Created)
	require.Empty(t, r.Dropped)
	require.False(t, ends[len(ends)-1].Before(now.Add(auditpartition.Ahead)))
	for i, name := range r.Created {
		start := ends[i].UTC()
		require.Equal(t, 1, start.Day(), "a month starts on its first day, in UTC")
		require.Zero(t, start.Hour())
		require.Equal(t, start.AddDate(0, 1, 0), ends[i+1].UTC(), "%s is a month", name)
		require.Equal(t, "audit_events_p"+start.Format("2006_01"), name)
	}
	event(t, pool, now.Add(auditpartition.Ahead-time.Second))

	again, err := auditpartition.Maintain(ctx, pool, now, 0)
	require.NoError(t, err)
	require.Empty(t, again.Created, "nothing to add")

	// A year later, the months up to then and two more are added.
	later, err := auditpartition.Maintain(ctx, pool, now.Add(year), 0)
	require.NoError(t, err)
	require.Len(t, later.Created, 12, "%+v", later)
	event(t, pool, now.Add(year+auditpartition.Ahead-time.Second))
}

// Months whose every event is past the retention period are dropped whole,
// the others and their events stay; without a retention period nothing is
// dropped.
func TestMaintainDropsExpiredMonths(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool := pgtest.Pool(t)
	now := time.Now()
	_, err := auditpartition.Maintain(ctx, pool, now.Add(90*24*time.Hour), year)
	require.NoError(t, err)
	names, ends := partitions(t, pool)
	require.GreaterOrEqual(t, len(names), 3)
	old := event(t, pool, now.Add(-30*24*time.Hour))
	inFirstMonth := event(t, pool, ends[0].Add(time.Hour))
	last := event(t, pool, ends[len(ends)-1].Add(-time.Hour))

	kept, err := auditpartition.Maintain(ctx, pool, ends[1].Add(year), 0)
	require.NoError(t, err)
	require.Empty(t, kept.Dropped, "RETENTION_AUDIT_EVENTS=off keeps everything")

	// At the end of the first month plus a year, the legacy partition and
	// the first month have expired, to the second.
	r, err := auditpartition.Maintain(ctx, pool, ends[1].Add(year), year)
	require.NoError(t, err)
	require.Equal(t, names[:2], r.Dropped)
	left, _ := partitions(t, pool)
	require.NotContains(t, left, names[0])
	require.NotContains(t, left, names[1])
	for _, id := range []int64{old, inFirstMonth} {
		require.Zero(t, pgtest.Count(t, pool, `SELECT count(*) FROM audit_events WHERE id = $1`, id))
	}
	require.Equal(t, 1, pgtest.Count(t, pool, `SELECT count(*) FROM audit_events WHERE id = $1`, last), "%+v", r)
	require.Zero(t, pgtest.Count(t, pool, `SELECT count(*) FROM pg_class WHERE relname = ANY($1)`, names[:2]),
		"the tables are gone, not only detached")
}

// A blocked copy names its event (blocked_copies_audit_event_fkey), so the
// event's partition is not dropped before the copy is: Maintain fails and
// leaves the partition whole, and drops it once the copy is gone.
func TestMaintainKeepsEventsThatCopiesReferTo(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool := pgtest.Pool(t)
	_, env := testfactory.TenantWithEnvironment(t, pool, "acme")
	mt := testfactory.MessageType(t, pool, &testfactory.MessageTypeOpts{Tenant: "acme"})
	at := time.Now().Add(-24 * time.Hour)
	_, err := pool.Exec(ctx, `
		WITH m AS (
			INSERT INTO messages (tenant_id, environment_id, message_type_id, payload, content_hash, source_endpoint)
			VALUES ($1, $2, $3, '{}', sha256('a'), 'receive-message') RETURNING id
		), e AS (
			INSERT INTO audit_events (tenant_id, environment_id, message_type_id, message_id, action, actor, created_at)
			SELECT $1, $2, $3, m.id, 'message.duplicate_blocked', 'test', $4 FROM m RETURNING id, created_at, message_id
		)
		INSERT INTO blocked_copies (tenant_id, environment_id, message_type_id, audit_event_id, received_at,
		                            original_message_id, payload, content_hash, sender)
		SELECT $1, $2, $3, e.id, e.created_at, e.message_id, '{}', sha256('b'), '{}' FROM e`,
		env.TenantID, env.ID, mt.ID, at)
	require.NoError(t, err)
	_, ends := partitions(t, pool)

	_, err = auditpartition.Maintain(ctx, pool, ends[0].Add(year), year)
	require.ErrorContains(t, err, "violates foreign key constraint")
	require.ErrorContains(t, err, "blocked_copies")
	names, _ := partitions(t, pool)
	require.Contains(t, names, "audit_events_legacy")
	require.Equal(t, 1, pgtest.Count(t, pool, `SELECT count(*) FROM audit_events WHERE created_at = $1`, at))

	_, err = pool.Exec(ctx, `DELETE FROM blocked_copies`)
	require.NoError(t, err)
	r, err := auditpartition.Maintain(ctx, pool, ends[0].Add(year), year)
	require.NoError(t, err)
	require.Equal(t, []string{"audit_events_legacy"}, r.Dropped)
}

// Servers that maintain the partitions at once take turns: one adds the
// months, the others find the lock held and skip.
func TestMaintainTakesTurns(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool := pgtest.Pool(t)
	now := time.Now()
	results := make([]auditpartition.Result, 4)
	errs := make([]error, len(results))
	var wg sync.WaitGroup
	for i := range results {
		wg.Go(func() { results[i], errs[i] = auditpartition.Maintain(ctx, pool, now, year) })
	}
	wg.Wait()
	var created []string
	for i, r := range results {
		require.NoError(t, errs[i])
		created = append(created, r.Created...)
	}
	names, _ := partitions(t, pool)
	require.ElementsMatch(t, names[1:], created, "each month added once")

	conn, err := pool.Acquire(ctx)
	require.NoError(t, err)
	defer conn.Release()
	_, err = conn.Exec(ctx, `SELECT pg_advisory_lock(hashtextextended('edihub audit_events partitions', 0))`)
	require.NoError(t, err)
	r, err := auditpartition.Maintain(ctx, pool, now.Add(year), year)
	require.NoError(t, err)
	require.True(t, r.Skipped)
	require.Empty(t, r.Created)
	_, err = conn.Exec(ctx, `SELECT pg_advisory_unlock(hashtextextended('edihub audit_events partitions', 0))`)
	require.NoError(t, err)
}

// A detach waits for the transactions that may still read the partition; one
// that runs longer than LockTimeout cuts it short, which leaves the
// partition detached half-way. The next round finishes and drops it.
func TestMaintainFinishesADetachCutShort(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool := pgtest.Pool(t)
	_, ends := partitions(t, pool)
	tx, err := pool.Begin(ctx)
	require.NoError(t, err)
	defer func() { _ = tx.Rollback(ctx) }()
	_, err = tx.Exec(ctx, `INSERT INTO audit_events (action, actor) VALUES ('user.created', 'cli')`)
	require.NoError(t, err)

	_, err = auditpartition.Maintain(ctx, pool, ends[0].Add(year), year)
	require.ErrorContains(t, err, "lock timeout")
	require.Equal(t, 1, pgtest.Count(t, pool, `SELECT count(*) FROM pg_inherits
		WHERE inhrelid = 'audit_events_legacy'::regclass AND inhdetachpending`), "detached half-way")
	require.NoError(t, tx.Commit(ctx))

	r, err := auditpartition.Maintain(ctx, pool, ends[0].Add(year), year)
	require.NoError(t, err)
	require.Equal(t, []string{"audit_events_legacy"}, r.Dropped)
	require.Zero(t, pgtest.Count(t, pool, `SELECT count(*) FROM pg_class WHERE relname = 'audit_events_legacy'`))
}
