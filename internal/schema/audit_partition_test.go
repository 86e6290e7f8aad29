package schema_test

import (
	"context"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/jackc/pgx/v5/stdlib"
	"github.com/pressly/goose/v3"
	"github.com/stretchr/testify/require"

	"github.com/lefia/edihub/internal/adminlist"
	"github.com/lefia/edihub/internal/auditlog"
	"github.com/lefia/edihub/internal/auditpartition"
	"github.com/lefia/edihub/internal/auth"
	"github.com/lefia/edihub/internal/db"
	"github.com/lefia/edihub/internal/pgtest"
	"github.com/lefia/edihub/internal/schema"
	"github.com/lefia/edihub/migrations"
)

// auditTrail is an audit trail as migration 013 left it: two tenants with
// an environment and a message type each (auditTrail), $1 messages of
// theirs (auditTrailMessages), and $1 audit events over the last 80 days,
// each of the $2 messages named by ten events (auditTrailEvents); nine events in ten are
// blocked duplicates, one in thirteen of those with changed content and a
// blocked copy received, as MessageStoreOrBlock writes it, when its event
// was created; the rest are sign-ins and failed sign-ins. The events are
// inserted with every index in place, as ingest writes them.
const auditTrail = `
INSERT INTO tenants (slug, name) SELECT 't' || i, 'Tenant ' || i FROM generate_series(1, 2) i;
INSERT INTO environments (tenant_id, slug) SELECT id, 'production' FROM tenants;
INSERT INTO message_types (tenant_id, code) SELECT id, 'ORDERS05' FROM tenants;
`

const auditTrailMessages = `
INSERT INTO messages (tenant_id, environment_id, message_type_id, docnum, payload, content_hash,
                      computed_fingerprint, fingerprint, source_endpoint, remote_addr, received_at)
SELECT e.tenant_id, e.id, mt.id, lpad(g::text, 16, '0'), '{"E1EDK01": {"BELNR": "4700000325"}}',
       sha256(convert_to('payload ' || g, 'UTF8')), encode(sha256(convert_to('fp ' || g, 'UTF8')), 'hex'),
       encode(sha256(convert_to('fp ' || g, 'UTF8')), 'hex'), 'receive-message', '10.0.0.' || g % 250,
       now() - interval '81 days'
FROM generate_series(1, $1::int) g
JOIN environments e ON e.tenant_id = (SELECT min(id) FROM tenants) + g % 2
JOIN message_types mt ON mt.tenant_id = e.tenant_id
`

const auditTrailEvents = `
WITH m AS (SELECT row_number() OVER (ORDER BY id) - 1 AS k, messages.* FROM messages),
ev AS (
    INSERT INTO audit_events (tenant_id, environment_id, message_type_id, message_id, action, actor, match_key,
                              details, created_at)
    SELECT CASE WHEN s.g % 10 <> 0 OR s.g % 20 <> 0 THEN m.tenant_id END,
           CASE WHEN s.g % 10 <> 0 THEN m.environment_id END,
           CASE WHEN s.g % 10 <> 0 THEN m.message_type_id END,
           CASE WHEN s.g % 10 <> 0 THEN m.id END,
           CASE WHEN s.g % 10 <> 0 THEN 'message.duplicate_blocked'
                WHEN s.g % 20 = 0 THEN 'user.login_failed' ELSE 'user.logged_in' END,
           CASE WHEN s.g % 10 <> 0 THEN 'api_key:1' ELSE 'anonymous' END,
           CASE WHEN s.g % 10 <> 0 THEN m.computed_fingerprint END,
           CASE WHEN s.g % 10 <> 0 THEN jsonb_build_object(
                    'mode', 'fingerprint', 'fingerprint', m.computed_fingerprint,
                    'original', jsonb_build_object('id', m.id, 'docnum', m.docnum),
                    'blocked', jsonb_build_object('docnum', m.docnum, 'content_hash', encode(m.content_hash, 'hex')),
                    'content', CASE WHEN s.g % 13 = 0 THEN 'changed' ELSE 'identical' END,
                    'source', jsonb_build_object('endpoint', 'receive-message', 'remote_addr', m.remote_addr))
                ELSE jsonb_build_object('email', 'user' || s.g % 100 || '@example.com', 'remote_addr', m.remote_addr) END,
           now() - make_interval(secs => ($1::int - s.g) * (80 * 86400.0 / $1::int))
    FROM generate_series(1, $1::int) s (g)
    JOIN m ON m.k = s.g % $2::int
    RETURNING id, tenant_id, environment_id, message_type_id, message_id, details, created_at
)
INSERT INTO blocked_copies (tenant_id, environment_id, message_type_id, audit_event_id, original_message_id,
                            docnum, payload, content_hash, sender, received_at)
SELECT ev.tenant_id, ev.environment_id, ev.message_type_id, ev.id, ev.message_id,
       ev.details->'original'->>'docnum', '{"E1EDK01": {"BELNR": "4700000326"}}', sha256(convert_to('copy ' || ev.id, 'UTF8')),
       '{"endpoint": "receive-message"}', ev.created_at
FROM ev WHERE ev.details->>'content' = 'changed'
`

// auditRows is a digest of every audit event, in id order, and of every
// blocked copy with the event it names.
const auditRows = `
SELECT (SELECT count(*) FROM audit_events),
       (SELECT md5(string_agg(e::text, ',' ORDER BY e.id)) FROM audit_events e),
       (SELECT count(*) FROM blocked_copies),
       (SELECT md5(string_agg(c.id || ':' || e.id || ':' || e.created_at, ',' ORDER BY c.id))
        FROM blocked_copies c JOIN audit_events e ON e.id = c.audit_event_id)`

type auditDigest struct {
	events, copies       int64
	eventsMD5, copiesMD5 string
}

func digest(t *testing.T, pool *pgxpool.Pool) auditDigest {
	t.Helper()
	var d auditDigest
	require.NoError(t, pool.QueryRow(context.Background(), auditRows).Scan(&d.events, &d.eventsMD5, &d.copies, &d.copiesMD5))
	return d
}

// bytesPerEvent is what audit_events takes on disk per event: its table
// (with TOAST) and its indexes, summed over the partitions when it has
// them.
func bytesPerEvent(t *testing.T, pool *pgxpool.Pool, events int64) (table, indexes float64) {
	t.Helper()
	var tableBytes, indexBytes int64
	require.NoError(t, pool.QueryRow(context.Background(), `
		SELECT sum(pg_table_size(c.oid)), sum(pg_indexes_size(c.oid)) FROM pg_class c
		WHERE (c.oid = 'audit_events'::regclass AND c.relkind = 'r')
		   OR c.oid IN (SELECT relid FROM pg_partition_tree('audit_events') WHERE isleaf)`).Scan(&tableBytes, &indexBytes))
	return float64(tableBytes) / float64(events), float64(indexBytes) / float64(events)
}

// An audit trail from before partitioning becomes the partitioned table's
// first partition in place: every event keeps its row and its id, every
// blocked copy its event, the ids go on from where they were, and the audit
// log lists through its indexes as before. The test logs how long the
// migrations took and the bytes per event before and after;
// EDIHUB_MIGRATION_EVENTS sets the number of events (docs/audit-events.md
// reports a million).
func TestAuditEventsPartitionedInPlace(t *testing.T) {
	t.Parallel()
	events := 50_000
	if n := os.Getenv("EDIHUB_MIGRATION_EVENTS"); n != "" {
		var err error
		events, err = strconv.Atoi(n)
		require.NoError(t, err)
	}
	ctx := context.Background()
	url := pgtest.EmptyURL(t)
	pool := pgtest.PoolFor(t, url)
	sqlDB := stdlib.OpenDBFromPool(pool)
	defer sqlDB.Close()
	p, err := goose.NewProvider(goose.DialectPostgres, sqlDB, migrations.FS, goose.WithGoMigrations(migrations.Go...))
	require.NoError(t, err)
	_, err = p.UpTo(ctx, 13)
	require.NoError(t, err)

	start := time.Now()
	_, err = pool.Exec(ctx, auditTrail)
	require.NoError(t, err)
	_, err = pool.Exec(ctx, auditTrailMessages, events/10)
	require.NoError(t, err)
	_, err = pool.Exec(ctx, auditTrailEvents, events, events/10)
	require.NoError(t, err)
	_, err = pool.Exec(ctx, `ANALYZE`)
	require.NoError(t, err)
	t.Logf("filled %d audit events in %s", events, time.Since(start).Round(time.Millisecond))
	before := digest(t, pool)
	require.EqualValues(t, events, before.events)
	require.Positive(t, before.copies)
	table, indexes := bytesPerEvent(t, pool, before.events)
	t.Logf("before: %.0f bytes per event (table %.0f, indexes %.0f)", table+indexes, table, indexes)
	var lastID int64
	require.NoError(t, pool.QueryRow(ctx, `SELECT max(id) FROM audit_events`).Scan(&lastID))

	for _, version := range []int64{14, 15} {
		start := time.Now()
		_, err := p.UpTo(ctx, version)
		require.NoError(t, err)
		t.Logf("migration %03d took %s on %d events and %d blocked copies",
			version, time.Since(start).Round(time.Millisecond), before.events, before.copies)
	}
	applied, err := schema.Migrate(ctx, pool)
	require.NoError(t, err)
	t.Logf("then %d later migrations", applied)

	require.Equal(t, before, digest(t, pool), "every event and every copy's event as they were")
	require.Equal(t, 1, pgtest.Count(t, pool, `SELECT count(*) FROM pg_class WHERE relname = 'audit_events' AND relkind = 'p'`))
	require.Equal(t, before.events, int64(pgtest.Count(t, pool, `SELECT count(*) FROM audit_events_legacy`)),
		"the old table is the first partition")
	require.Equal(t, before.copies, int64(pgtest.Count(t, pool, `SELECT count(*) FROM blocked_copies c
		JOIN audit_events e ON e.created_at = c.received_at AND e.id = c.audit_event_id`)),
		"every copy finds its event by the key that names it")
	table, indexes = bytesPerEvent(t, pool, before.events)
	t.Logf("after: %.0f bytes per event (table %.0f, indexes %.0f)", table+indexes, table, indexes)
	rows, err := pool.Query(ctx, `SELECT i.indexrelid::regclass::text, pg_relation_size(i.indexrelid)
		FROM pg_index i WHERE i.indrelid = 'audit_events_legacy'::regclass ORDER BY 2 DESC`)
	require.NoError(t, err)
	for rows.Next() {
		var name string
		var size float64
		require.NoError(t, rows.Scan(&name, &size))
		t.Logf("  %s: %.0f bytes per event", name, size/float64(before.events))
	}
	require.NoError(t, rows.Err())

	// Months ahead are added beside the old table, and the writers' next
	// event takes the next id.
	_, err = auditpartition.Maintain(ctx, pool, time.Now(), 365*24*time.Hour)
	require.NoError(t, err)
	require.NoError(t, db.On(pool).AuditEventInsert(ctx, db.AuditEventInsertParams{
		Action: "user.created", Actor: "cli", Details: []byte(`{}`),
	}))
	var next int64
	require.NoError(t, pool.QueryRow(ctx, `SELECT max(id) FROM audit_events`).Scan(&next))
	require.Equal(t, lastID+1, next, "ids go on from the old table's")
	_, err = pool.Exec(ctx, `INSERT INTO audit_events (action, actor, created_at) VALUES ('user.created', 'cli', now() + interval '40 days')`)
	require.NoError(t, err, "a month ahead has its partition")

	// The old rows are still append-only, and a copy must name its event
	// by the event's own time.
	_, err = pool.Exec(ctx, `UPDATE audit_events SET actor = 'x' WHERE id = 1`)
	require.ErrorContains(t, err, "append-only")
	_, err = pool.Exec(ctx, `UPDATE blocked_copies SET received_at = received_at + interval '1 second'
		WHERE id = (SELECT min(id) FROM blocked_copies)`)
	require.ErrorContains(t, err, "blocked_copies_audit_event_fkey")

	// The audit log pages through the migrated events newest first, along
	// the indexes the partition brought.
	traced, rec := pgtest.TracedPool(t, url, "FROM audit_events")
	svc := auditlog.New(traced)
	for action, index := range map[string]string{
		"message.duplicate_blocked": "audit_events_pkey",
		"user.login_failed":         "audit_events_action_time",
	} {
		page, err := svc.List(ctx, auth.GlobalScope(), auditlog.Filter{Action: action})
		require.NoError(t, err)
		require.Len(t, page.Events, auditlog.PageSize)
		scans, raw := rec.Explain(t, traced)
		require.NotContains(t, scans, "Seq Scan on audit_events", "%s", raw)
		require.Contains(t, scans, index, "%s", raw)
		older, err := svc.List(ctx, auth.GlobalScope(), auditlog.Filter{Action: action, Window: adminlist.Window{Before: page.Older}})
		require.NoError(t, err)
		require.Less(t, older.Events[0].ID, page.Events[len(page.Events)-1].ID)
		require.Equal(t, action, older.Events[0].Action)
	}
}

// Migrations 015 and 014 go down as well: the partitions' rows, those of
// months added since included, are copied back into one table, which takes
// its ids on from the last; and up again the same rows are partitioned anew.
func TestAuditEventsPartitioningMigratesDownAndUp(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool := pgtest.PoolFor(t, pgtest.EmptyURL(t))
	sqlDB := stdlib.OpenDBFromPool(pool)
	defer sqlDB.Close()
	p, err := goose.NewProvider(goose.DialectPostgres, sqlDB, migrations.FS, goose.WithGoMigrations(migrations.Go...))
	require.NoError(t, err)
	_, err = p.UpTo(ctx, 13)
	require.NoError(t, err)
	_, err = pool.Exec(ctx, auditTrail)
	require.NoError(t, err)
	_, err = pool.Exec(ctx, auditTrailMessages, 100)
	require.NoError(t, err)
	_, err = pool.Exec(ctx, auditTrailEvents, 1000, 100)
	require.NoError(t, err)
	before := digest(t, pool)
	down := func() {
		t.Helper()
		_, err := p.DownTo(ctx, 13)
		require.NoError(t, err)
		require.Equal(t, 1, pgtest.Count(t, pool, `SELECT count(*) FROM pg_class WHERE relname = 'audit_events' AND relkind = 'r'`))
	}

	_, err = p.UpTo(ctx, 15)
	require.NoError(t, err)
	down()
	require.Equal(t, before, digest(t, pool))
	_, err = p.UpTo(ctx, 15)
	require.NoError(t, err)
	require.Equal(t, before, digest(t, pool))

	// A month added after the migration, with an event in it.
	var legacyEnd time.Time
	require.NoError(t, pool.QueryRow(ctx, `SELECT (regexp_match(pg_get_expr(relpartbound, oid), 'TO \(''([^'']+)''\)'))[1]::timestamptz
		FROM pg_class WHERE relname = 'audit_events_legacy'`).Scan(&legacyEnd))
	_, err = auditpartition.Maintain(ctx, pool, time.Now(), 0)
	require.NoError(t, err)
	_, err = pool.Exec(ctx, `INSERT INTO audit_events (action, actor, created_at) VALUES ('user.created', 'cli', $1)`,
		legacyEnd.Add(time.Hour))
	require.NoError(t, err)
	after := digest(t, pool)
	require.Equal(t, before.events+1, after.events)
	down()
	require.Equal(t, after, digest(t, pool))
	var last, next int64
	require.NoError(t, pool.QueryRow(ctx, `SELECT max(id) FROM audit_events`).Scan(&last))
	require.NoError(t, pool.QueryRow(ctx, `INSERT INTO audit_events (action, actor) VALUES ('user.created', 'cli') RETURNING id`).Scan(&next))
	require.Equal(t, last+1, next, "the ids go on")
}
