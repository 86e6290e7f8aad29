package auditlog_test

import (
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"

	"github.com/lefia/edihub/internal/adminlist"
	"github.com/lefia/edihub/internal/auditlog"
	"github.com/lefia/edihub/internal/auditpartition"
	"github.com/lefia/edihub/internal/auth"
	"github.com/lefia/edihub/internal/db"
	"github.com/lefia/edihub/internal/pgtest"
)

// On a table with realistic statistics, the list query reads audit_events
// through the index that fits its filters, on the first page and deep in the
// log, and never reads the whole table.
func TestListQueryUsesAnIndex(t *testing.T) {
	t.Parallel()
	url := pgtest.URL(t)
	load := pgtest.PoolFor(t, url)
	fill(t, load, 20000)
	checkListPlans(t, url, load)
}

// The same holds when the newest events are in months that have never been
// analyzed, as every new month is while autovacuum is off: the plans do
// not wait for statistics.
func TestListQueryUsesAnIndexWithoutStatistics(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	url := pgtest.URL(t)
	load := pgtest.PoolFor(t, url)
	fill(t, load, 20000)
	_, err := auditpartition.Maintain(ctx, load, time.Now().Add(120*24*time.Hour), 0)
	require.NoError(t, err)
	_, err = load.Exec(ctx, `
		INSERT INTO audit_events (tenant_id, environment_id, message_type_id, message_id, action, actor, match_key, details, created_at)
		SELECT tenant_id, environment_id, message_type_id, message_id, action, actor, match_key, details,
		       created_at + interval '100 days'
		FROM audit_events WHERE created_at > now() - interval '30 days'`)
	require.NoError(t, err)
	require.Positive(t, pgtest.Count(t, load, `SELECT count(*) FROM audit_events WHERE created_at > now() + interval '80 days'`))
	require.Zero(t, pgtest.Count(t, load, `SELECT count(*) FROM pg_stat_user_tables
		WHERE relname LIKE 'audit_events_p%' AND (last_analyze IS NOT NULL OR last_autoanalyze IS NOT NULL)`),
		"the new months have no statistics")
	checkListPlans(t, url, load)
}

// checkListPlans lists the audit log with each filter an admin uses and
// checks the index its plan reads. load fills the database.
func checkListPlans(t *testing.T, url string, load *pgxpool.Pool) {
	pool, traced := pgtest.TracedPool(t, url, "FROM audit_events")
	svc := auditlog.New(pool)

	ctx := context.Background()
	var deep string
	var key string
	var t4 int64
	require.NoError(t, load.QueryRow(ctx, `SELECT id FROM tenants WHERE slug = 't4'`).Scan(&t4))
	var cursor adminlist.Cursor
	require.NoError(t, load.QueryRow(ctx, `SELECT created_at, id FROM audit_events
		ORDER BY created_at DESC, id DESC OFFSET 15000 LIMIT 1`).Scan(&cursor.Time, &cursor.ID))
	deep = cursor.Encode()
	require.NoError(t, load.QueryRow(ctx, `SELECT match_key FROM audit_events WHERE match_key IS NOT NULL LIMIT 1`).Scan(&key))
	var message int64
	require.NoError(t, load.QueryRow(ctx, `SELECT message_id FROM audit_events WHERE message_id IS NOT NULL LIMIT 1`).Scan(&message))
	// An environment with a few events of its own among its tenant's many,
	// as a sandbox beside production.
	var rare int64
	require.NoError(t, load.QueryRow(ctx, `INSERT INTO environments (tenant_id, slug) VALUES ($1, 'rare') RETURNING id`, t4).Scan(&rare))
	_, err := load.Exec(ctx, `
		INSERT INTO audit_events (tenant_id, environment_id, message_type_id, action, actor, match_key, details, created_at)
		SELECT tenant_id, $2, message_type_id, action, actor, match_key, details, created_at - interval '1 day'
		FROM audit_events WHERE tenant_id = $1 AND environment_id IS NOT NULL ORDER BY id LIMIT 20`, t4, rare)
	require.NoError(t, err)
	// Statistics of the partition the fill wrote, as after any ANALYZE;
	// the months TestListQueryUsesAnIndexWithoutStatistics adds stay
	// without.
	_, err = load.Exec(ctx, `ANALYZE audit_events_legacy`)
	require.NoError(t, err)

	dup := "message.duplicate_blocked"
	tests := []listPlan{
		// The primary key, (created_at, id), read backwards.
		{"everything", auth.GlobalScope(), auditlog.Filter{}, "audit_events_pkey"},
		{"everything, deep", auth.GlobalScope(), auditlog.Filter{Window: adminlist.Window{Before: deep}}, "audit_events_pkey"},
		// Blocked duplicates, nine events in ten, are the first entries of
		// any time-ordered index; only the rare actions have an index of
		// their own (audit_events_action_time and
		// audit_events_tenant_action_time hold no blocked duplicate).
		{"action", auth.GlobalScope(), auditlog.Filter{Action: dup}, "audit_events_pkey"},
		{"content changed", auth.GlobalScope(), auditlog.Filter{Content: "changed"}, "audit_events_content_time"},
		{"content changed, deep", auth.GlobalScope(), auditlog.Filter{Content: "changed", Window: adminlist.Window{Before: deep}}, "audit_events_content_time"},
		{"rare action, deep", auth.GlobalScope(), auditlog.Filter{Action: "user.login_failed", Window: adminlist.Window{Before: deep}}, "audit_events_action_time"},
		{"tenant scope", auth.TenantScope(t4), auditlog.Filter{}, "audit_events_tenant_time"},
		{"tenant scope and action, deep", auth.TenantScope(t4), auditlog.Filter{Action: dup, Window: adminlist.Window{Before: deep}}, "audit_events_tenant_time"},
		{"tenant filter and action", auth.GlobalScope(), auditlog.Filter{Names: adminlist.Names{Tenant: "t4"}, Action: dup}, "audit_events_tenant_time"},
		{"tenant filter and rare action", auth.GlobalScope(), auditlog.Filter{Names: adminlist.Names{Tenant: "t4"}, Action: "user.logged_in"}, "audit_events_tenant_action_time"},
		{"message", auth.GlobalScope(), auditlog.Filter{Action: dup, MessageID: strconv.FormatInt(message, 10)}, "audit_events_message"},
		{"rare environment", auth.GlobalScope(), auditlog.Filter{Names: adminlist.Names{Tenant: "t4", Environment: "rare"}}, "audit_events_environment_time"},
		{"fingerprint", auth.GlobalScope(), auditlog.Filter{Key: key}, "audit_events_match_key_time"},
		{"message type", auth.GlobalScope(), auditlog.Filter{Names: adminlist.Names{Tenant: "t4", MessageType: "SHOP_ORDER"}}, "audit_events_message_type_time"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			scans, raw := tt.explain(t, svc, pool, traced)
			require.NotContains(t, scans, "Seq Scan on audit_events", "%s", raw)
			require.Contains(t, scans, tt.index, "%s", raw)
		})
	}
}

// listPlan is a filter an admin lists the audit log with, in a scope, and
// the index its plan must read.
type listPlan struct {
	name   string
	scope  auth.Scope
	filter auditlog.Filter
	index  string
}

// explain lists the log with p's filter, which must find events, and
// explains the statement the list ran as it ran it: the content filter's in
// a transaction that rules sorting out (AuditEventListInTimeOrder).
func (p listPlan) explain(t *testing.T, svc *auditlog.Service, pool *pgxpool.Pool, traced *pgtest.Recorder) (scans []string, raw []byte) {
	t.Helper()
	ctx := t.Context()
	page, err := svc.List(ctx, p.scope, p.filter)
	require.NoError(t, err)
	require.Empty(t, page.Problems)
	require.NotEmpty(t, page.Events)
	tx, err := pool.Begin(ctx)
	require.NoError(t, err)
	defer func() { require.NoError(t, tx.Rollback(ctx)) }()
	if p.filter.Content != "" {
		require.NoError(t, db.On(tx).AuditEventListInTimeOrder(ctx))
	}
	return traced.ExplainOn(t, tx)
}

// The login throttle (auth.Login) counts a sign-in's recent failures along
// the two indexes of failed sign-ins, by email and by address, even on the
// generic plan a pooled connection settles on: they are the reason those
// indexes exist.
func TestLoginThrottleReadsFailedSignInIndexes(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	url := pgtest.URL(t)
	load := pgtest.PoolFor(t, url)
	fill(t, load, 20000)
	pool, traced := pgtest.TracedPool(t, url, "AuditEventLoginFailures")
	n, err := db.On(pool).AuditEventLoginFailures(ctx, db.AuditEventLoginFailuresParams{
		WindowSeconds: (90 * 24 * time.Hour).Seconds(), Email: "User20@example.com", RemoteAddr: "192.0.2.1",
	})
	require.NoError(t, err)
	require.Positive(t, n)
	scans, raw := traced.ExplainGeneric(t, pool)
	require.NotContains(t, scans, "Seq Scan on audit_events", "%s", raw)
	require.Contains(t, scans, "audit_events_login_failed_email", "%s", raw)
	require.Contains(t, scans, "audit_events_login_failed_addr", "%s", raw)
}

// A log analysed while it was empty, as one that grew with autovacuum off,
// gives the planner no idea how many events a filter matches. The content
// filter then sorted all of a tenant's changed copies to show one page
// (1.6 s at 10 million messages), and a tenant's admin looking up a
// fingerprint or a message had the tenant's whole index ANDed with the
// event's (140 ms). Each reads the index that fits it instead: the content
// filter in the page's order, a fingerprint's or a message's events through
// their own, checking the tenant on each.
func TestListReadsTheFittingIndexOnStatisticsOfAnEmptyLog(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	url := pgtest.URL(t)
	load := pgtest.PoolFor(t, url)
	fill(t, load, 200000)
	var t4, message int64
	var key string
	require.NoError(t, load.QueryRow(ctx, `SELECT id FROM tenants WHERE slug = 't4'`).Scan(&t4))
	require.NoError(t, load.QueryRow(ctx, `SELECT match_key, message_id FROM audit_events
		WHERE tenant_id = $1 AND match_key IS NOT NULL AND message_id IS NOT NULL LIMIT 1`, t4).Scan(&key, &message))
	// The statistics ANALYZE leaves on an empty table.
	superuser := pgtest.PoolFor(t, pgtest.SuperuserURL(t, url))
	_, err := superuser.Exec(ctx, `DELETE FROM pg_statistic WHERE starelid IN (SELECT oid FROM pg_class WHERE relname LIKE 'audit_events%')`)
	require.NoError(t, err)
	_, err = superuser.Exec(ctx, `UPDATE pg_class SET reltuples = 0, relpages = 0 WHERE relname LIKE 'audit_events%'`)
	require.NoError(t, err)

	pool, traced := pgtest.TracedPool(t, url, "FROM audit_events")
	svc := auditlog.New(pool)
	dup := "message.duplicate_blocked"
	tests := []listPlan{
		{"content, every tenant", auth.GlobalScope(), auditlog.Filter{Content: "changed"}, "audit_events_content_time"},
		{"content, one tenant", auth.GlobalScope(),
			auditlog.Filter{Names: adminlist.Names{Tenant: "t4"}, Action: dup, Content: "changed"}, "audit_events_content_time"},
		{"fingerprint, tenant scope", auth.TenantScope(t4), auditlog.Filter{Key: key}, "audit_events_match_key_time"},
		{"fingerprint, tenant filter", auth.GlobalScope(), auditlog.Filter{Names: adminlist.Names{Tenant: "t4"}, Key: key}, "audit_events_match_key_time"},
		{"message, tenant scope", auth.TenantScope(t4),
			auditlog.Filter{Action: dup, MessageID: strconv.FormatInt(message, 10)}, "audit_events_message"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			scans, raw := tt.explain(t, svc, pool, traced)
			require.Contains(t, scans, tt.index, "%s", raw)
			require.NotContains(t, scans, "audit_events_tenant_time", "%s", raw)
			if tt.filter.Content != "" {
				require.NotContains(t, string(raw), `"Node Type": "Sort"`, "%s", raw)
			}
		})
	}
}
