package auditlog_test

import (
	"context"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"
)

// A realistic audit trail, in three statements: four tenants, each with two
// environments and three message types (fillTenants); messages spread over
// the tenants unequally, 50%, 30%, 15% and 5% (fillMessages, $1 of them);
// and $1 audit events about $2 messages (fillEvents). Nine events in ten are
// blocked duplicates, one in seven of those by Idempotency-Key and one in
// thirteen with changed content; the rest are sign-ins and failed sign-ins
// (outside any tenant). One event every 7.7 seconds puts a million of them
// over about 89 days.
const fillTenants = `
INSERT INTO tenants (slug, name) SELECT 't' || i, 'Tenant ' || i FROM generate_series(1, 4) i;
INSERT INTO environments (tenant_id, slug) SELECT t.id, e FROM tenants t, unnest(ARRAY['production', 'sandbox']) e;
INSERT INTO message_types (tenant_id, code, duplicate_key_fields)
SELECT t.id, c, '["*.IDOC.E1EDK01.BELNR"]' FROM tenants t, unnest(ARRAY['ORDERS05', 'INVOIC02', 'SHOP_ORDER']) c`

const fillMessages = `
WITH slots AS (
    SELECT g, CASE WHEN g % 20 < 10 THEN 1 WHEN g % 20 < 16 THEN 2 WHEN g % 20 < 19 THEN 3 ELSE 4 END AS ti
    FROM generate_series(1, $1::int) g),
tn AS (SELECT row_number() OVER (ORDER BY id) AS ti, id FROM tenants),
en AS (SELECT tenant_id, array_agg(id ORDER BY id) AS ids FROM environments GROUP BY tenant_id),
ty AS (SELECT tenant_id, array_agg(id ORDER BY id) AS ids FROM message_types GROUP BY tenant_id)
INSERT INTO messages (tenant_id, environment_id, message_type_id, docnum, payload, content_hash,
                      computed_fingerprint, fingerprint, source_endpoint, remote_addr, received_at)
SELECT tn.id, en.ids[1 + g % cardinality(en.ids)], ty.ids[1 + g % cardinality(ty.ids)], lpad(g::text, 16, '0'),
       json_build_object('ORDERS05', json_build_object('IDOC', json_build_object(
           'EDI_DC40', json_build_object('DOCNUM', lpad(g::text, 16, '0'), 'MESTYP', 'ORDERS'),
           'E1EDK01', json_build_object('BELNR', (4700000000 + g)::text)))),
       sha256(convert_to('payload ' || g, 'UTF8')),
       encode(sha256(convert_to('fingerprint ' || g, 'UTF8')), 'hex'),
       encode(sha256(convert_to('fingerprint ' || g, 'UTF8')), 'hex'),
       'receive-message', '10.0.' || (g % 200) || '.' || (g % 250), now() - interval '90 days'
FROM slots JOIN tn USING (ti) JOIN en ON en.tenant_id = tn.id JOIN ty ON ty.tenant_id = tn.id`

const fillEvents = `
INSERT INTO audit_events (tenant_id, environment_id, message_type_id, message_id, action, actor, match_key, details, created_at)
SELECT CASE WHEN s.dup OR NOT s.failed THEN m.tenant_id END,
       CASE WHEN s.dup THEN m.environment_id END,
       CASE WHEN s.dup THEN m.message_type_id END,
       CASE WHEN s.dup THEN m.id END,
       CASE WHEN s.dup THEN 'message.duplicate_blocked' WHEN s.failed THEN 'user.login_failed' ELSE 'user.logged_in' END,
       CASE WHEN s.dup THEN 'api_key:1' WHEN s.failed THEN 'anonymous' ELSE 'user:1' END,
       CASE WHEN NOT s.dup THEN NULL WHEN s.keyed THEN 'order-' || m.id ELSE m.computed_fingerprint END,
       CASE WHEN s.dup THEN jsonb_build_object(
                'mode', CASE WHEN s.keyed THEN 'idempotency_key' ELSE 'fingerprint' END,
                CASE WHEN s.keyed THEN 'idempotency_key' ELSE 'fingerprint' END,
                CASE WHEN s.keyed THEN 'order-' || m.id ELSE m.computed_fingerprint END,
                'original', jsonb_build_object('id', m.id, 'docnum', m.docnum),
                'blocked', jsonb_build_object('docnum', m.docnum, 'content_hash', encode(m.content_hash, 'hex')),
                'content', CASE WHEN s.g % 13 = 0 THEN 'changed' ELSE 'identical' END,
                'source', jsonb_build_object('endpoint', 'receive-message', 'integration_id', NULL,
                                             'remote_addr', m.remote_addr))
            ELSE jsonb_build_object('email', 'user' || (s.g % 100) || '@example.com', 'remote_addr', m.remote_addr) END,
       now() - make_interval(secs => ($1::int - s.g) * 7.7)
FROM (SELECT g, g % 10 <> 0 AS dup, g % 20 = 0 AS failed, g % 7 = 0 AS keyed,
             (g::bigint * 7919) % $2::int AS k
      FROM generate_series(1, $1::int) g) s
JOIN (SELECT row_number() OVER (ORDER BY id) - 1 AS k, messages.* FROM messages) m USING (k)`

// fill writes events audit events (see fillEvents) into a freshly migrated
// database and analyzes it. The audit_events indexes are dropped for the
// load (with their partitions') and built again from their own definitions afterwards, which is many
// times faster than maintaining them row by row, and leaves the same
// indexes the migrations made.
func fill(tb testing.TB, pool *pgxpool.Pool, events int) {
	tb.Helper()
	ctx := context.Background()
	rows, err := pool.Query(ctx, `SELECT indexname, indexdef FROM pg_indexes
		WHERE tablename = 'audit_events' AND indexname <> 'audit_events_pkey'`)
	require.NoError(tb, err)
	defs := map[string]string{}
	for rows.Next() {
		var name, def string
		require.NoError(tb, rows.Scan(&name, &def))
		defs[name] = def
	}
	require.NoError(tb, rows.Err())
	for name := range defs {
		_, err := pool.Exec(ctx, `DROP INDEX `+name)
		require.NoError(tb, err)
	}
	messages := max(events/50, 10)
	_, err = pool.Exec(ctx, fillTenants)
	require.NoError(tb, err)
	_, err = pool.Exec(ctx, fillMessages, messages)
	require.NoError(tb, err)
	_, err = pool.Exec(ctx, fillEvents, events, messages)
	require.NoError(tb, err)
	for _, def := range defs {
		// A partitioned table's index is defined ON ONLY the table (its
		// partitions' indexes are attached one by one); built again, it is
		// built on every partition at once.
		_, err := pool.Exec(ctx, strings.Replace(def, " ON ONLY ", " ON ", 1))
		require.NoError(tb, err)
	}
	_, err = pool.Exec(ctx, `ANALYZE`)
	require.NoError(tb, err)
}
