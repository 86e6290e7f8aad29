package messagesearch_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/lefia/edihub/internal/adminlist"
	"github.com/lefia/edihub/internal/auth"
	"github.com/lefia/edihub/internal/messagesearch"
	"github.com/lefia/edihub/internal/pgtest"
)

// A million messages over a year, in SQL: four tenants with 60 %, 30 %,
// 9.9 % and 0.1 % of them; in each tenant one message in a hundred in the
// sandbox environment and one in ten of type SHOP_ORDER; every message
// with a docnum of its own and a business key value (its BELNR): in its
// row in every other thousand ids, as ingest writes it, and in message_keys
// in the others, as it wrote it before migration 039.
const fillMillion = `
INSERT INTO tenants (slug, name) SELECT 't' || i, 'Tenant ' || i FROM generate_series(1, 4) i;
INSERT INTO environments (tenant_id, slug) SELECT t.id, e FROM tenants t, unnest(ARRAY['production', 'sandbox']) e;
INSERT INTO message_types (tenant_id, code, duplicate_key_fields)
SELECT t.id, c, '["E1EDK01.BELNR"]' FROM tenants t, unnest(ARRAY['ORDERS05', 'SHOP_ORDER']) c;

INSERT INTO messages (id, tenant_id, environment_id, message_type_id, docnum, payload, content_hash,
                      source_endpoint, received_at, first_key_value)
OVERRIDING SYSTEM VALUE
SELECT g, t.id, env.id, mt.id, lpad(g::text, 16, '0'), '{}', sha256(convert_to(g::text, 'UTF8')), 'receive-message',
       now() - (1000000 - g) * interval '31 seconds', CASE WHEN g / 1000 % 2 = 0 THEN (4500000000 + g)::text END
FROM generate_series(1, 1000000) g
JOIN tenants t ON t.slug = 't' || CASE WHEN g % 1000 = 0 THEN 4 WHEN g % 10 = 1 THEN 3
                                       WHEN g % 10 IN (2, 3, 4) THEN 2 ELSE 1 END
JOIN environments env ON env.tenant_id = t.id AND env.slug = CASE WHEN g % 100 = 5 THEN 'sandbox' ELSE 'production' END
JOIN message_types mt ON mt.tenant_id = t.id AND mt.code = CASE WHEN g % 7 = 0 THEN 'SHOP_ORDER' ELSE 'ORDERS05' END;

SELECT setval(pg_get_serial_sequence('messages', 'id'), 1000000);

INSERT INTO message_keys (tenant_id, message_id, value)
SELECT tenant_id, id, (4500000000 + id)::text FROM messages WHERE id / 1000 % 2 = 1;
`

// Every search reads the one index range that fits its filters, never a
// whole table, with a million messages and plans made for every parameter
// value at once (generic plans, which prepared statements switch to): the
// index use does not hang on PostgreSQL seeing the values.
func TestSearchReadsOneIndexRangeWithGenericPlans(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	url := pgtest.URL(t)
	load := pgtest.PoolFor(t, url)
	_, err := load.Exec(ctx, fillMillion)
	require.NoError(t, err)
	_, err = load.Exec(ctx, `VACUUM ANALYZE`)
	require.NoError(t, err)
	// One message in ten came in an X12 interchange of its own, which
	// PostgreSQL has never analyzed: the control number's plan must not
	// need statistics.
	_, err = load.Exec(ctx, `
INSERT INTO interchanges (tenant_id, environment_id, standard, sender, receiver, control_number, content_hash,
                          response_body, received_at)
SELECT tenant_id, environment_id, 'x12', 'ZZ:SENDER' || id % 7, 'ZZ:RECEIVER', lpad((id / 10)::text, 9, '0'), content_hash,
       json_build_object('messages', json_build_array(json_build_object('id', id))), received_at
FROM messages WHERE id % 10 = 0`)
	require.NoError(t, err)

	// The service itself runs with generic plans too, so that the results
	// checked below are those of the plans explained.
	pool, traced := pgtest.TracedPool(t, url+"&plan_cache_mode=force_generic_plan", "SELECT m.id\nFROM")
	svc := messagesearch.New(pool)

	var t1, t4, someID, olderID int64
	var someDocnum string
	require.NoError(t, load.QueryRow(ctx, `SELECT id FROM tenants WHERE slug = 't1'`).Scan(&t1))
	require.NoError(t, load.QueryRow(ctx, `SELECT id FROM tenants WHERE slug = 't4'`).Scan(&t4))
	require.NoError(t, load.QueryRow(ctx, `SELECT id, docnum FROM messages WHERE tenant_id = $1 AND id / 1000 % 2 = 0 ORDER BY id OFFSET 300 LIMIT 1`, t4).
		Scan(&someID, &someDocnum))
	require.NoError(t, load.QueryRow(ctx, `SELECT id FROM messages WHERE tenant_id = $1 AND id / 1000 % 2 = 1 ORDER BY id OFFSET 300 LIMIT 1`, t4).
		Scan(&olderID))
	someKey, olderKey := fmt.Sprint(4500000000+someID), fmt.Sprint(4500000000+olderID)
	someControlNumber := fmt.Sprintf("%09d", someID/10)
	var deep adminlist.Cursor
	require.NoError(t, load.QueryRow(ctx, `SELECT received_at, id FROM messages ORDER BY received_at DESC, id DESC OFFSET 600000 LIMIT 1`).
		Scan(&deep.Time, &deep.ID))

	tests := []struct {
		name   string
		scope  auth.Scope
		filter messagesearch.Filter
		index  string
		found  int // messages on the page; 0 means a full page
	}{
		{"everything", auth.GlobalScope(), messagesearch.Filter{}, "messages_time", 0},
		{"everything, deep", auth.GlobalScope(), messagesearch.Filter{Window: adminlist.Window{Before: deep.Encode()}}, "messages_time", 0},
		{"a month", auth.GlobalScope(), messagesearch.Filter{Window: adminlist.Window{From: "2000-01-01", To: "2100-01-01"}}, "messages_time", 0},
		{"rare tenant's scope", auth.TenantScope(t4), messagesearch.Filter{}, "messages_tenant_time", 0},
		{"rare tenant's scope, deep", auth.TenantScope(t4), messagesearch.Filter{Window: adminlist.Window{Before: deep.Encode()}}, "messages_tenant_time", 0},
		{"rare tenant named", auth.GlobalScope(), messagesearch.Filter{Names: adminlist.Names{Tenant: "t4"}}, "messages_tenant_time", 0},
		{"environment", auth.TenantScope(t1), messagesearch.Filter{Names: adminlist.Names{Environment: "sandbox"}}, "messages_environment_time", 0},
		{"message type", auth.GlobalScope(), messagesearch.Filter{Names: adminlist.Names{Tenant: "t4", MessageType: "SHOP_ORDER"}}, "messages_type_received", 0},
		{"docnum", auth.GlobalScope(), messagesearch.Filter{Docnum: someDocnum}, "messages_docnum", 1},
		{"key value", auth.GlobalScope(), messagesearch.Filter{Key: someKey}, "messages_first_key_value", 1},
		{"key value in its tenant", auth.TenantScope(t4), messagesearch.Filter{Key: someKey}, "messages_first_key_value", 1},
		{"key value of another tenant", auth.TenantScope(t1), messagesearch.Filter{Key: someKey}, "messages_first_key_value", -1},
		{"key value kept in message_keys", auth.TenantScope(t4), messagesearch.Filter{Key: olderKey}, "message_keys_pkey", 1},
		{"control number", auth.GlobalScope(), messagesearch.Filter{ControlNumber: someControlNumber}, "interchanges_control_number_lookup", 1},
		{"control number in its tenant", auth.TenantScope(t4), messagesearch.Filter{ControlNumber: someControlNumber},
			"interchanges_control_number_lookup", 1},
		{"control number of another tenant", auth.TenantScope(t1), messagesearch.Filter{ControlNumber: someControlNumber},
			"interchanges_control_number_lookup", -1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			page, err := svc.List(ctx, tt.scope, tt.filter)
			require.NoError(t, err)
			require.Empty(t, page.Problems)
			switch tt.found {
			case 0:
				require.Len(t, page.Messages, messagesearch.PageSize)
			case -1:
				require.Empty(t, page.Messages)
			default:
				require.Len(t, page.Messages, tt.found)
				want := someID
				if tt.filter.Key == olderKey {
					want = olderID
				}
				require.Equal(t, want, page.Messages[0].ID)
			}
			scans, raw := traced.ExplainGeneric(t, pool)
			require.NotContains(t, scans, "Seq Scan on messages", "%s", raw)
			require.NotContains(t, scans, "Seq Scan on message_keys", "%s", raw)
			require.NotContains(t, scans, "Seq Scan on interchanges", "%s", raw)
			require.Contains(t, scans, tt.index, "%s", raw)
		})
	}
}
