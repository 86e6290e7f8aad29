package audit_test

import (
	"context"
	"encoding/json"
	"strings"
	"sync"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"

	"github.com/lefia/edihub/internal/audit"
	"github.com/lefia/edihub/internal/auth"
	"github.com/lefia/edihub/internal/pgtest"
)

// lastQuery records the SQL and arguments of the last audit_events query a
// pool ran, so that a test can EXPLAIN exactly what List sent, with the
// same execution mode.
type lastQuery struct {
	mu   sync.Mutex
	sql  string
	args []any
}

func (q *lastQuery) TraceQueryStart(ctx context.Context, _ *pgx.Conn, data pgx.TraceQueryStartData) context.Context {
	if strings.Contains(data.SQL, "FROM audit_events") {
		q.mu.Lock()
		q.sql, q.args = data.SQL, data.Args
		q.mu.Unlock()
	}
	return ctx
}

func (*lastQuery) TraceQueryEnd(context.Context, *pgx.Conn, pgx.TraceQueryEndData) {}

// planNode is the part of EXPLAIN (FORMAT JSON) output the test reads.
type planNode struct {
	NodeType  string     `json:"Node Type"`
	Relation  string     `json:"Relation Name"`
	IndexName string     `json:"Index Name"`
	Plans     []planNode `json:"Plans"`
}

// scansOf lists how the plan reads audit_events: "Seq Scan", or the
// index's name for index and bitmap index scans.
func scansOf(n planNode) []string {
	var scans []string
	switch {
	case n.Relation == "audit_events" && n.NodeType == "Seq Scan":
		scans = append(scans, n.NodeType)
	case strings.HasPrefix(n.IndexName, "audit_events"):
		scans = append(scans, n.IndexName)
	}
	for _, child := range n.Plans {
		scans = append(scans, scansOf(child)...)
	}
	return scans
}

// tracedService returns a Service on a new pool on url whose last
// audit_events query is recorded in the returned lastQuery.
func tracedService(tb testing.TB, url string) (*audit.Service, *pgxpool.Pool, *lastQuery) {
	tb.Helper()
	cfg, err := pgxpool.ParseConfig(url)
	require.NoError(tb, err)
	traced := &lastQuery{}
	cfg.ConnConfig.Tracer = traced
	pool, err := pgxpool.NewWithConfig(context.Background(), cfg)
	require.NoError(tb, err)
	tb.Cleanup(pool.Close)
	return audit.New(pool), pool, traced
}

// explainLast explains the last query traced recorded, with its arguments
// and execution mode, and returns how the plan reads audit_events (see
// scansOf) and the whole plan for messages.
func explainLast(tb testing.TB, pool *pgxpool.Pool, traced *lastQuery) ([]string, []byte) {
	tb.Helper()
	traced.mu.Lock()
	sql, args := traced.sql, traced.args
	traced.mu.Unlock()
	var raw []byte
	require.NoError(tb, pool.QueryRow(context.Background(), "EXPLAIN (FORMAT JSON) "+sql, args...).Scan(&raw))
	var plans []struct {
		Plan planNode `json:"Plan"`
	}
	require.NoError(tb, json.Unmarshal(raw, &plans))
	return scansOf(plans[0].Plan), raw
}

// On a table with realistic statistics, the list query reads audit_events
// through the index that fits its filters, on the first page and deep in the
// log, and never reads the whole table.
func TestListQueryUsesAnIndex(t *testing.T) {
	t.Parallel()
	url := pgtest.URL(t)
	load := pgtest.PoolFor(t, url)
	fill(t, load, 20000)

	svc, pool, traced := tracedService(t, url)

	ctx := context.Background()
	var deep string
	var key string
	var t4 int64
	require.NoError(t, load.QueryRow(ctx, `SELECT id FROM tenants WHERE slug = 't4'`).Scan(&t4))
	var cursor audit.Cursor
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
		{"everything", auth.GlobalScope(), audit.Filter{}, "audit_events_time"},
		{"everything, deep", auth.GlobalScope(), audit.Filter{Before: deep}, "audit_events_time"},
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
			scans, raw := explainLast(t, pool, traced)
			require.NotContains(t, scans, "Seq Scan", "%s", raw)
			require.Contains(t, scans, tt.index, "%s", raw)
		})
	}
}
