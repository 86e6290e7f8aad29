package dashboard_test

import (
	"context"
	"log/slog"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"

	"github.com/lefia/edihub/internal/auth"
	"github.com/lefia/edihub/internal/dashboard"
	"github.com/lefia/edihub/internal/pgtest"
	"github.com/lefia/edihub/internal/rollup"
)

// A year of traffic, so that the dashboard's days are a small part of it as
// they are in production: {messages} messages and as many blocked duplicates spread
// evenly over 365 days, nine in ten of them acme's.
const fillYear = `
INSERT INTO messages (tenant_id, environment_id, message_type_id, payload, content_hash, source_endpoint, received_at)
SELECT mt.tenant_id, env.id, mt.id, '{}', decode(repeat('00', 32), 'hex'), 'receive-message',
       now() - (g % 365) * interval '1 day' - (g % 1440) * interval '1 minute'
FROM generate_series(1, {messages}) g
JOIN message_types mt ON mt.code = CASE WHEN g % 10 = 0 THEN 'SHOP_ORDER' WHEN g % 2 = 0 THEN 'ORDERS05' ELSE 'INVOIC02' END
JOIN environments env ON env.tenant_id = mt.tenant_id;

INSERT INTO audit_events (tenant_id, environment_id, message_type_id, action, actor, details, created_at)
SELECT m.tenant_id, m.environment_id, m.message_type_id, 'message.duplicate_blocked', 'test',
       jsonb_build_object('mode', 'fingerprint', 'content', 'identical'), m.received_at
FROM messages m;
`

// The dashboard's two queries read the hourly totals and a range of an
// index of messages and audit_events, never a whole table, for a tenant's
// user and for a global one, as custom plans and as the generic plan a
// prepared statement may switch to. With statistics fresh, before the
// first rollup (when everything is the tail since the watermark) and after
// it. With statistics from when the tables were small (ANALYZEd at 3,000
// messages, then a year of 30,000 more, as a hub with autovacuum off
// keeps them) after the rollup, where the planner must tell the tail since
// the watermark from the whole table by estimates that know neither.
// (Before the first rollup the tail is every row of the 14 days, and
// reading the table for it is a fair choice on such statistics.)
func TestLoadReadsIndexRanges(t *testing.T) {
	t.Parallel()
	for _, stats := range []string{"fresh", "from when the tables were small"} {
		t.Run(stats, func(t *testing.T) {
			t.Parallel()
			s := setup(t)
			ctx := context.Background()
			fill := strings.ReplaceAll(fillYear, "{messages}", "30000") + "ANALYZE;"
			if stats != "fresh" {
				fill = strings.ReplaceAll(fillYear, "{messages}", "3000") + "ANALYZE;" +
					strings.ReplaceAll(fillYear, "{messages}", "30000")
			}
			_, err := s.pool.Exec(ctx, fill)
			require.NoError(t, err)
			requireIndexRanges(t, s, stats == "fresh")
		})
	}
}

// requireIndexRanges checks the plans of the dashboard's queries after the
// first rollup, and before it too when beforeRollup.
func requireIndexRanges(t *testing.T, s *site, beforeRollup bool) {
	ctx := context.Background()
	url := s.pool.Config().ConnString()
	for _, rolledUp := range []bool{false, true} {
		if rolledUp {
			require.NoError(t, rollup.New(s.pool, slog.Default(), 0).CatchUp(ctx))
		} else if !beforeRollup {
			continue
		}
		for _, scope := range []auth.Scope{auth.TenantScope(s.acme), auth.GlobalScope()} {
			for marker, table := range map[string]string{
				"FROM traffic_messages_hourly r": "messages",
				"FROM traffic_blocked_hourly r":  "audit_events",
			} {
				pool, rec := pgtest.TracedPool(t, url, marker)
				_, err := dashboard.New(pool).Load(ctx, scope, "", time.Now())
				require.NoError(t, err)
				for _, explain := range []func(testing.TB, *pgxpool.Pool) ([]string, []byte){rec.Explain, rec.ExplainGeneric} {
					scans, raw := explain(t, pool)
					require.False(t, slices.ContainsFunc(scans, func(s string) bool { return strings.HasPrefix(s, "Seq Scan on "+table) }),
						"reads no whole table: %v\n%s", scans, raw)
					require.True(t, slices.ContainsFunc(scans, func(s string) bool { return strings.HasPrefix(s, table+"_") }),
						"reads %s through one of its indexes: %s", table, raw)
				}
			}
		}
	}
}
