package auditlog_test

import (
	"context"
	"fmt"
	"net/url"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"

	"github.com/lefia/edihub/internal/adminlist"
	"github.com/lefia/edihub/internal/auditlog"
	"github.com/lefia/edihub/internal/auth"
	"github.com/lefia/edihub/internal/pgtest"
)

// testBundle is a small audit trail: fillEvents' tenants t1…t4 with
// events events, and the ids needed to filter it.
type testBundle struct {
	pool    *pgxpool.Pool
	svc     *auditlog.Service
	tenants map[string]int64 // by slug
}

func setup(t *testing.T, events int) *testBundle {
	t.Helper()
	pool := pgtest.Pool(t)
	fill(t, pool, events)
	b := &testBundle{pool: pool, svc: auditlog.New(pool), tenants: map[string]int64{}}
	rows, err := pool.Query(context.Background(), `SELECT slug, id FROM tenants`)
	require.NoError(t, err)
	for rows.Next() {
		var slug string
		var id int64
		require.NoError(t, rows.Scan(&slug, &id))
		b.tenants[slug] = id
	}
	require.NoError(t, rows.Err())
	return b
}

// ids lists, newest first, the ids of the events a SQL condition selects;
// it is the answer List must give, written the plain way.
func (b *testBundle) ids(t *testing.T, where string, args ...any) []int64 {
	t.Helper()
	return pgtest.Column[int64](t, b.pool,
		`SELECT e.id FROM audit_events e WHERE `+where+` ORDER BY e.created_at DESC, e.id DESC`, args...)
}

// all follows the Older cursors from the first page to the last and
// returns every event id listed, in order.
func (b *testBundle) all(t *testing.T, scope auth.Scope, f auditlog.Filter) []int64 {
	t.Helper()
	var ids []int64
	for pages := 0; ; pages++ {
		require.Less(t, pages, 1000, "pagination must end")
		page, err := b.svc.List(context.Background(), scope, f)
		require.NoError(t, err)
		require.Empty(t, page.Problems)
		require.LessOrEqual(t, len(page.Events), auditlog.PageSize)
		for _, e := range page.Events {
			ids = append(ids, e.ID)
		}
		if page.Older == "" {
			return ids
		}
		require.Len(t, page.Events, auditlog.PageSize, "only the last page is short")
		f = f.Older(page.Older)
	}
}

func TestListPagesThroughEveryEventNewestFirst(t *testing.T) {
	t.Parallel()
	b := setup(t, 500)
	// Events in one transaction share a created_at; the id breaks the tie.
	_, err := b.pool.Exec(context.Background(), `
		INSERT INTO audit_events (tenant_id, action, actor, details, created_at)
		SELECT NULL, 'user.login_failed', 'anonymous', '{}', now() - interval '1 day' FROM generate_series(1, 70)`)
	require.NoError(t, err)

	want := b.ids(t, "true")
	require.Len(t, want, 570)
	require.Equal(t, want, b.all(t, auth.GlobalScope(), auditlog.Filter{}))
}

func TestListFilters(t *testing.T) {
	t.Parallel()
	b := setup(t, 3000)
	ctx := context.Background()
	var fingerprint string
	var messageID int64
	require.NoError(t, b.pool.QueryRow(ctx, `SELECT match_key, message_id FROM audit_events
		WHERE details->>'mode' = 'fingerprint' ORDER BY id LIMIT 1`).Scan(&fingerprint, &messageID))
	var middle time.Time
	require.NoError(t, b.pool.QueryRow(ctx, `SELECT created_at FROM audit_events ORDER BY id OFFSET 1500 LIMIT 1`).Scan(&middle))
	from := middle.UTC().Add(-time.Hour).Format("2006-01-02T15:04")
	to := middle.UTC().Add(time.Hour).Format(time.RFC3339)
	t2, t4 := b.tenants["t2"], b.tenants["t4"]

	tests := []struct {
		name   string
		filter auditlog.Filter
		where  string
		args   []any
	}{
		{"action", auditlog.Filter{Action: "user.login_failed"}, `action = 'user.login_failed'`, nil},
		{"tenant", auditlog.Filter{Names: adminlist.Names{Tenant: "t4"}}, `tenant_id = $1`, []any{t4}},
		{"tenant and action", auditlog.Filter{Names: adminlist.Names{Tenant: "t2"}, Action: "message.duplicate_blocked"},
			`tenant_id = $1 AND action = 'message.duplicate_blocked'`, []any{t2}},
		{"environment", auditlog.Filter{Names: adminlist.Names{Tenant: "t2", Environment: "sandbox"}},
			`environment_id = (SELECT id FROM environments WHERE tenant_id = $1 AND slug = 'sandbox')`, []any{t2}},
		{"message type", auditlog.Filter{Names: adminlist.Names{Tenant: "t4", MessageType: "INVOIC02"}},
			`message_type_id = (SELECT id FROM message_types WHERE tenant_id = $1 AND code = 'INVOIC02')`, []any{t4}},
		{"fingerprint", auditlog.Filter{Key: fingerprint}, `match_key = $1`, []any{fingerprint}},
		{"message", auditlog.Filter{MessageID: fmt.Sprint(messageID)}, `message_id = $1`, []any{messageID}},
		{"time range", auditlog.Filter{Window: adminlist.Window{From: from, To: to}},
			`created_at >= $1 AND created_at < $2`, []any{middle.Add(-time.Hour).Truncate(time.Minute), middle.Add(time.Hour).Truncate(time.Second)}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			want := b.ids(t, tt.where, tt.args...)
			require.NotEmpty(t, want, "the filter must select something to prove anything")
			require.Equal(t, want, b.all(t, auth.GlobalScope(), tt.filter))
		})
	}
}

func TestListDecodesBlockedDuplicates(t *testing.T) {
	t.Parallel()
	b := setup(t, 100)
	page, err := b.svc.List(context.Background(), auth.GlobalScope(),
		auditlog.Filter{Action: "message.duplicate_blocked", Names: adminlist.Names{Tenant: "t1", Environment: "production", MessageType: "ORDERS05"}})
	require.NoError(t, err)
	require.NotEmpty(t, page.Events)
	for _, e := range page.Events {
		d := e.Duplicate
		require.NotNil(t, d)
		require.Equal(t, "t1", e.Tenant)
		require.Equal(t, "production", e.Environment)
		require.Equal(t, "ORDERS05", e.MessageType)
		require.Equal(t, e.MatchKey, d.Key())
		require.Equal(t, e.MessageID, d.Original.ID)
		require.Contains(t, []string{"identical", "changed"}, d.Content)
		require.Equal(t, "receive-message", d.Source.Endpoint)
	}
	require.ElementsMatch(t, []string{"t1", "t2", "t3", "t4"}, page.Tenants)
}

func TestListKeepsToTheScope(t *testing.T) {
	t.Parallel()
	b := setup(t, 1000)
	t3 := b.tenants["t3"]
	own := b.ids(t, `tenant_id = $1`, t3)
	scope := auth.TenantScope(t3)

	require.Equal(t, own, b.all(t, scope, auditlog.Filter{}))
	require.Equal(t, own, b.all(t, scope, auditlog.Filter{Names: adminlist.Names{Tenant: "t3"}}))
	require.Empty(t, b.all(t, scope, auditlog.Filter{Action: "user.login_failed"}), "events outside any tenant are the global users'")
	require.Empty(t, b.all(t, auth.Scope{}, auditlog.Filter{}), "the zero scope sees nothing")

	// Another tenant's name reads as unknown, exactly like a made-up one.
	for _, slug := range []string{"t1", "nope"} {
		page, err := b.svc.List(context.Background(), scope, auditlog.Filter{Names: adminlist.Names{Tenant: slug}})
		require.NoError(t, err)
		require.Equal(t, []string{fmt.Sprintf("there is no tenant %q", slug)}, page.Problems)
		require.Empty(t, page.Events)
		require.Equal(t, []string{"t3"}, page.Tenants)
	}
	// Another tenant's message yields nothing.
	var other int64
	require.NoError(t, b.pool.QueryRow(context.Background(),
		`SELECT message_id FROM audit_events WHERE tenant_id <> $1 AND message_id IS NOT NULL LIMIT 1`, t3).Scan(&other))
	require.Empty(t, b.all(t, scope, auditlog.Filter{MessageID: fmt.Sprint(other)}))
}

func TestListExplainsFiltersItCannotApply(t *testing.T) {
	t.Parallel()
	b := setup(t, 10)
	page, err := b.svc.List(context.Background(), auth.GlobalScope(), auditlog.Filter{
		Action:    "DROP TABLE",
		Names:     adminlist.Names{Environment: "production"},
		Key:       string(make([]byte, 300)),
		MessageID: "12x",
		Window:    adminlist.Window{From: "yesterday", To: "2026-13-01", Before: "not-a-cursor"},
	})
	require.NoError(t, err)
	require.Empty(t, page.Events)
	require.Equal(t, []string{
		`"DROP TABLE" is not an action name such as message.duplicate_blocked`,
		"choose a tenant to filter by environment or message type",
		"a fingerprint or key has at most 255 characters",
		`"12x" is not a message id`,
		`"yesterday" is not a time (from): write YYYY-MM-DD or YYYY-MM-DD HH:MM, UTC`,
		`"2026-13-01" is not a time (to): write YYYY-MM-DD or YYYY-MM-DD HH:MM, UTC`,
		"the page link is not valid: start again from the first page",
	}, page.Problems)

	page, err = b.svc.List(context.Background(), auth.GlobalScope(),
		auditlog.Filter{Names: adminlist.Names{Tenant: "t1", Environment: "qa", MessageType: "DESADV"}})
	require.NoError(t, err)
	require.Equal(t, []string{`the tenant has no environment "qa"`, `the tenant has no message type "DESADV"`}, page.Problems)
}

func TestFilterRoundTripsThroughTheURL(t *testing.T) {
	t.Parallel()
	f := auditlog.Filter{
		Action:    "message.duplicate_blocked",
		Names:     adminlist.Names{Tenant: "acme", Environment: "production", MessageType: "ORDERS05"},
		Key:       "a b&c",
		MessageID: "7",
		Window:    adminlist.Window{From: "2026-01-01T00:00", To: "2026-02-01T00:00", Before: "MTIz"},
	}
	u, err := url.Parse(f.URL())
	require.NoError(t, err)
	require.Equal(t, f, auditlog.FilterFromQuery(u.Query()))
	require.Equal(t, "/admin/audit?action=message.duplicate_blocked", auditlog.Filter{Action: "message.duplicate_blocked"}.URL())
	require.Equal(t, "/admin/audit", auditlog.Filter{}.URL(), "empty fields stay out of the URL")
	require.Equal(t, "/admin/audit?action=x.y&key=k", auditlog.Filter{Action: "x.y", Window: adminlist.Window{Before: "c"}}.WithKey("k").URL(),
		"narrowing the filter starts from the newest event")
}

// An event outlives the message it names: once the message has expired the
// event is still listed, and says that its message is gone; the events of
// stored messages do not.
func TestListShowsEventsOfExpiredMessages(t *testing.T) {
	t.Parallel()
	b := setup(t, 200)
	ctx := context.Background()
	var gone int64
	require.NoError(t, b.pool.QueryRow(ctx, `SELECT message_id FROM audit_events
		WHERE action = 'message.duplicate_blocked' ORDER BY id DESC LIMIT 1`).Scan(&gone))
	_, err := b.pool.Exec(ctx, `DELETE FROM messages WHERE id = $1`, gone)
	require.NoError(t, err)

	want := b.ids(t, "message_id = $1", gone)
	require.NotEmpty(t, want)
	page, err := b.svc.List(ctx, auth.GlobalScope(), auditlog.Filter{MessageID: fmt.Sprint(gone)})
	require.NoError(t, err)
	var got []int64
	for _, e := range page.Events {
		got = append(got, e.ID)
		require.True(t, e.MessageExpired, "event %d", e.ID)
		require.NotNil(t, e.Duplicate)
		require.Equal(t, gone, e.Duplicate.Original.ID, "the event still names its original")
	}
	require.Equal(t, want, got)

	all, err := b.svc.List(ctx, auth.GlobalScope(), auditlog.Filter{Action: "message.duplicate_blocked"})
	require.NoError(t, err)
	for _, e := range all.Events {
		require.Equal(t, e.MessageID == gone, e.MessageExpired, "event %d", e.ID)
	}
}
