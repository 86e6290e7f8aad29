package auditlog_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/lefia/edihub/internal/adminlist"
	"github.com/lefia/edihub/internal/auditlog"
	"github.com/lefia/edihub/internal/auth"
	"github.com/lefia/edihub/internal/pgtest"
)

// BenchmarkAuditList measures one page of the audit log on a table of a
// million events: the first page, and a page half-way back through the
// log, with the filters admins use. Each op is what the page costs,
// including the lookups of the names in the filter. The table is filled
// once per run (see fill) and shared by the sub-benchmarks; with -v each
// logs the index its plan reads.
func BenchmarkAuditList(b *testing.B) {
	pool, traced := pgtest.TracedPool(b, pgtest.URL(b), "FROM audit_events")
	svc := auditlog.New(pool)
	start := time.Now()
	fill(b, pool, 1_000_000)
	b.Logf("filled 1,000,000 audit events in %s", time.Since(start).Round(time.Second))
	ctx := context.Background()

	var middle adminlist.Cursor
	require.NoError(b, pool.QueryRow(ctx, `SELECT created_at, id FROM audit_events
		ORDER BY created_at DESC, id DESC OFFSET 500000 LIMIT 1`).Scan(&middle.Time, &middle.ID))
	deep := middle.Encode()
	var key string
	var t4 int64
	require.NoError(b, pool.QueryRow(ctx, `SELECT match_key FROM audit_events
		WHERE match_key IS NOT NULL ORDER BY id LIMIT 1 OFFSET 400000`).Scan(&key))
	require.NoError(b, pool.QueryRow(ctx, `SELECT id FROM tenants WHERE slug = 't4'`).Scan(&t4))

	const dup = "message.duplicate_blocked"
	type page struct {
		name   string
		scope  auth.Scope
		filter auditlog.Filter
	}
	pages := []page{{"match_key/first", auth.GlobalScope(), auditlog.Filter{Key: key}}}
	for _, p := range []page{
		{"all", auth.GlobalScope(), auditlog.Filter{}},
		{"action", auth.GlobalScope(), auditlog.Filter{Action: dup}},
		{"rare_action", auth.GlobalScope(), auditlog.Filter{Action: "user.login_failed"}},
		{"action+tenant", auth.GlobalScope(), auditlog.Filter{Action: dup, Names: adminlist.Names{Tenant: "t4"}}},
		{"tenant_user", auth.TenantScope(t4), auditlog.Filter{}},
		{"tenant_user+action", auth.TenantScope(t4), auditlog.Filter{Action: dup}},
		{"environment", auth.GlobalScope(), auditlog.Filter{Names: adminlist.Names{Tenant: "t4", Environment: "sandbox"}}},
		{"message_type", auth.GlobalScope(), auditlog.Filter{Names: adminlist.Names{Tenant: "t4", MessageType: "SHOP_ORDER"}}},
	} {
		pages = append(pages, page{p.name + "/first", p.scope, p.filter},
			page{p.name + "/deep", p.scope, p.filter.Older(deep)})
	}
	for _, bm := range pages {
		b.Run(bm.name, func(b *testing.B) {
			// The plan of the query measured, logged for the report; a
			// Seq Scan on a million rows would be no benchmark of a page.
			_, err := svc.List(ctx, bm.scope, bm.filter)
			require.NoError(b, err)
			scans, raw := traced.Explain(b, pool)
			require.NotContains(b, scans, "Seq Scan on audit_events", "%s", raw)
			b.Logf("reads through %v", scans)
			for b.Loop() {
				got, err := svc.List(ctx, bm.scope, bm.filter)
				if err != nil || len(got.Problems) > 0 || len(got.Events) == 0 {
					b.Fatalf("list: %v %v, %d events", err, got.Problems, len(got.Events))
				}
			}
		})
	}
}
