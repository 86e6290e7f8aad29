package typeeditor_test

import (
	"context"
	"log/slog"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/lefia/edihub/internal/auth"
	"github.com/lefia/edihub/internal/pgtest"
	"github.com/lefia/edihub/internal/rollup"
	"github.com/lefia/edihub/internal/typeeditor"
)

// The list's recent counts are the dashboard's, read from the traffic
// rollups and the tail since their watermark, never a whole table, with
// 60,000 messages and 30,000 blocked duplicates over 70 days; they are
// the same before the first rollup and after it.
func TestListCountsReadRecentIndexRanges(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool, traced := pgtest.TracedPool(t, pgtest.URL(t), "FROM traffic_messages_hourly r")
	_, err := pool.Exec(ctx, `
INSERT INTO tenants (slug, name) SELECT 't' || i, 'Tenant ' || i FROM generate_series(1, 2) i;
INSERT INTO environments (tenant_id, slug) SELECT id, 'production' FROM tenants;
INSERT INTO message_types (tenant_id, code) SELECT t.id, c FROM tenants t, unnest(ARRAY['ORDERS05', 'INVOIC02', 'SHOP_ORDER']) c;
INSERT INTO messages (tenant_id, environment_id, message_type_id, payload, content_hash, source_endpoint, received_at)
SELECT mt.tenant_id, e.id, mt.id, '{}', sha256(convert_to(mt.id || '/' || g, 'UTF8')), 'receive-message',
       now() - (g - 0.5) * interval '10 minutes'
FROM message_types mt JOIN environments e ON e.tenant_id = mt.tenant_id, generate_series(1, 10000) g;
INSERT INTO audit_events (tenant_id, message_type_id, action, actor, created_at)
SELECT mt.tenant_id, mt.id, 'message.duplicate_blocked', 'test', now() - (g - 0.5) * interval '20 minutes'
FROM message_types mt, generate_series(1, 5000) g`)
	require.NoError(t, err)
	_, err = pool.Exec(ctx, `VACUUM ANALYZE`)
	require.NoError(t, err)

	for _, rolledUp := range []bool{false, true} {
		if rolledUp {
			require.NoError(t, rollup.New(pool, slog.Default(), 0).CatchUp(ctx))
		}
		list, err := typeeditor.New(pool).List(ctx, auth.GlobalScope())
		require.NoError(t, err)
		require.Len(t, list, 6)
		for _, l := range list {
			require.Equal(t, int64(1008), l.Received, "one every 10 minutes for 7 days")
			require.Equal(t, int64(504), l.Duplicates, "one every 20 minutes")
		}

		scans, raw := traced.ExplainGeneric(t, pool)
		require.NotContains(t, scans, "Seq Scan on messages", "%s", raw)
	}
}
