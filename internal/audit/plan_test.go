package audit_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/lefia/edihub/internal/audit"
	"github.com/lefia/edihub/internal/auth"
	"github.com/lefia/edihub/internal/keyset"
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

	pool, traced := pgtest.TracedPool(t, url, "FROM audit_events")
	svc := audit.New(pool)

	ctx := context.Background()
	var deep string
	var key string
	var t4 int64
	require.NoError(t, load.QueryRow(ctx, `SELECT id FROM tenants WHERE slug = 't4'`).Scan(&t4))
	var cursor keyset.Cursor
	require.NoError(t, load.QueryRow(ctx, `SELECT created_at, id FROM audit_events
		ORDER BY created_at DESC, id DESC OFFSET 15000 LIMIT 1`).Scan(&cursor.Time, &cursor.ID))
	deep = cursor.Encode()
	require.NoError(t, load.QueryRow(ctx, `SELECT match_key FROM audit_events WHERE match_key IS NOT NULL LIMIT 1`).Scan(&key))

	dup := "message.duplicate_blocked"
	tests := []struct {
		name   string
		scope  auth.Scope
		filter audit.Filter
		index  string
	}{
		// The primary key, (created_at, id), read backwards.
		{"everything", auth.GlobalScope(), audit.Filter{}, "audit_events_pkey"},
		{"everything, deep", auth.GlobalScope(), audit.Filter{Before: deep}, "audit_events_pkey"},
		{"action", auth.GlobalScope(), audit.Filter{Action: dup}, "audit_events_action_time"},
		{"rare action, deep", auth.GlobalScope(), audit.Filter{Action: "user.login_failed", Before: deep}, "audit_events_action_time"},
		{"tenant scope", auth.TenantScope(t4), audit.Filter{}, "audit_events_tenant_time"},
		{"tenant scope and action, deep", auth.TenantScope(t4), audit.Filter{Action: dup, Before: deep}, "audit_events_tenant_action_time"},
		{"tenant filter and action", auth.GlobalScope(), audit.Filter{Tenant: "t4", Action: dup}, "audit_events_tenant_action_time"},
		{"fingerprint", auth.GlobalScope(), audit.Filter{Key: key}, "audit_events_match_key_time"},
		{"message type", auth.GlobalScope(), audit.Filter{Tenant: "t4", MessageType: "SHOP_ORDER"}, "audit_events_message_type_time"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			page, err := svc.List(ctx, tt.scope, tt.filter)
			require.NoError(t, err)
			require.Empty(t, page.Problems)
			require.NotEmpty(t, page.Events)
			scans, raw := traced.Explain(t, pool)
			require.NotContains(t, scans, "Seq Scan on audit_events", "%s", raw)
			require.Contains(t, scans, tt.index, "%s", raw)
		})
	}
}
