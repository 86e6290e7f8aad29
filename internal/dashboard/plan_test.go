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
// they are in production: messages and blocked duplicates spread evenly
// over 365 days, nine in ten of them acme's.
const fillYear = `
INSERT INTO messages (tenant_id, environment_id, message_type_id, payload, content_hash, source_endpoint, received_at)
SELECT mt.tenant_id, env.id, mt.id, '{}', decode(repeat('00', 32), 'hex'), 'receive-message',
       now() - (g % 365) * interval '1 day' - (g % 1440) * interval '1 minute'
FROM generate_series(1, 30000) g
JOIN message_types mt ON mt.code = CASE WHEN g % 10 = 0 THEN 'SHOP_ORDER' WHEN g % 2 = 0 THEN 'ORDERS05' ELSE 'INVOIC02' END
JOIN environments env ON env.tenant_id = mt.tenant_id;

INSERT INTO audit_events (tenant_id, environment_id, message_type_id, action, actor, details, created_at)
SELECT m.tenant_id, m.environment_id, m.message_type_id, 'message.duplicate_blocked', 'test',
       jsonb_build_object('mode', 'fingerprint', 'content', 'identical'), m.received_at
FROM messages m;

ANALYZE;
`

// The dashboard's two queries read the hourly totals and a range of an
// index of messages and audit_events, never a whole table, for a tenant's
// user and for a global one, before the first rollup (when everything is
// the tail since the watermark) and after it, as custom plans and as the
// generic plan a prepared statement may switch to.
func TestLoadReadsIndexRanges(t *testing.T) {
	t.Parallel()
	s := setup(t)
	ctx := context.Background()
	_, err := s.pool.Exec(ctx, fillYear)
	require.NoError(t, err)
	url := s.pool.Config().ConnString()

	for _, rolledUp := range []bool{false, true} {
		if rolledUp {
			require.NoError(t, rollup.New(s.pool, slog.Default(), 0).CatchUp(ctx))
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
					require.NotContains(t, scans, "Seq Scan on "+table, "%s", raw)
					require.True(t, slices.ContainsFunc(scans, func(s string) bool { return strings.HasPrefix(s, table+"_") }),
						"reads %s through one of its indexes: %s", table, raw)
				}
			}
		}
	}
}
