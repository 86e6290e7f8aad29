package dashboard_test

import (
	"context"
	"log/slog"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"

	"github.com/lefia/edihub/internal/auth"
	"github.com/lefia/edihub/internal/dashboard"
	"github.com/lefia/edihub/internal/db"
	"github.com/lefia/edihub/internal/pgtest"
	"github.com/lefia/edihub/internal/rollup"
	"github.com/lefia/edihub/internal/testfactory"
)

// site is a database with two tenants whose messages and blocked
// duplicates are spread over the last three weeks.
type site struct {
	pool  *pgxpool.Pool
	acme  int64
	types map[string]db.MessageType
	envs  map[string]int64
}

func setup(t *testing.T) *site {
	t.Helper()
	pool := pgtest.Pool(t)
	s := &site{pool: pool, types: map[string]db.MessageType{}, envs: map[string]int64{}}
	for _, tenant := range []struct {
		slug  string
		types []string
	}{{"acme", []string{"ORDERS05", "INVOIC02"}}, {"globex", []string{"SHOP_ORDER"}}} {
		tn, env := testfactory.TenantWithEnvironment(t, pool, tenant.slug)
		if tenant.slug == "acme" {
			s.acme = tn.ID
		}
		s.envs[tenant.slug] = env.ID
		for _, code := range tenant.types {
			s.types[code] = testfactory.MessageType(t, pool, &testfactory.MessageTypeOpts{Tenant: tenant.slug, Code: code})
		}
	}
	return s
}

// messages stores n messages of a type received age ago (a PostgreSQL
// interval, judged by the database clock as the dashboard is).
func (s *site) messages(t *testing.T, code string, n int, age string) {
	t.Helper()
	mt := s.types[code]
	_, err := s.pool.Exec(context.Background(), `
		INSERT INTO messages (tenant_id, environment_id, message_type_id, payload, content_hash, source_endpoint, received_at)
		SELECT $1, $2, $3, '{}', decode(repeat('00', 32), 'hex'), 'receive-message', now() - $4::interval
		FROM generate_series(1, $5)`, mt.TenantID, s.envOf(mt), mt.ID, age, n)
	require.NoError(t, err)
}

// blocked records n blocked duplicates of a type, age ago.
func (s *site) blocked(t *testing.T, code, mode, content string, n int, age string) {
	t.Helper()
	mt := s.types[code]
	_, err := s.pool.Exec(context.Background(), `
		INSERT INTO audit_events (tenant_id, environment_id, message_type_id, action, actor, details, created_at)
		SELECT $1, $2, $3, 'message.duplicate_blocked', 'test', jsonb_build_object('mode', $4::text, 'content', $5::text),
		       now() - $6::interval
		FROM generate_series(1, $7)`, mt.TenantID, s.envOf(mt), mt.ID, mode, content, age, n)
	require.NoError(t, err)
}

func (s *site) envOf(mt db.MessageType) int64 {
	if mt.TenantID == s.acme {
		return s.envs["acme"]
	}
	return s.envs["globex"]
}

func fill(t *testing.T) *site {
	t.Helper()
	s := setup(t)
	s.messages(t, "ORDERS05", 3, "1 hour")
	s.messages(t, "ORDERS05", 2, "3 days")
	s.messages(t, "ORDERS05", 1, "10 days")
	s.messages(t, "INVOIC02", 1, "1 hour")
	s.messages(t, "SHOP_ORDER", 4, "1 hour")
	s.blocked(t, "ORDERS05", "fingerprint", "identical", 2, "2 hours")
	s.blocked(t, "ORDERS05", "fingerprint", "changed", 1, "2 days")
	s.blocked(t, "ORDERS05", "idempotency_key", "identical", 1, "10 days")
	s.blocked(t, "ORDERS05", "fingerprint", "identical", 5, "20 days") // before the chart
	s.blocked(t, "INVOIC02", "idempotency_key", "identical", 3, "5 hours")
	s.blocked(t, "SHOP_ORDER", "fingerprint", "changed", 1, "1 hour")
	_, err := s.pool.Exec(context.Background(),
		`INSERT INTO audit_events (action, actor, details) VALUES ('user.login_failed', 'anonymous', '{}')`)
	require.NoError(t, err)
	return s
}

func TestLoadCountsEverythingAGlobalUserSees(t *testing.T) {
	t.Parallel()
	s := fill(t)
	now := time.Now()
	d, err := dashboard.New(s.pool).Load(context.Background(), auth.GlobalScope(), "", now)
	require.NoError(t, err)

	require.Empty(t, d.Problem)
	require.Equal(t, []string{"acme", "globex"}, d.Tenants)
	require.Equal(t, dashboard.Window{Day: 8, Week: 10}, d.Received)
	require.Equal(t, dashboard.Blocked{
		Total:          dashboard.Window{Day: 6, Week: 7},
		Fingerprint:    dashboard.Window{Day: 3, Week: 4},
		IdempotencyKey: dashboard.Window{Day: 3, Week: 3},
		Identical:      dashboard.Window{Day: 5, Week: 5},
		Changed:        dashboard.Window{Day: 1, Week: 2},
	}, d.Blocked)
	require.WithinDuration(t, now.Add(-7*24*time.Hour), d.WeekStart, time.Second)

	// The chart: one series per type with duplicates in its 14 days, by
	// tenant and code; one bar per day, ending today.
	require.Equal(t, []string{"acme/INVOIC02", "acme/ORDERS05", "globex/SHOP_ORDER"}, names(d.Series))
	require.Len(t, d.Days, dashboard.ChartDays)
	today := now.UTC().Truncate(24 * time.Hour)
	require.Equal(t, today, d.Days[dashboard.ChartDays-1].Date)
	require.Equal(t, today.AddDate(0, 0, -(dashboard.ChartDays-1)), d.Days[0].Date)
	perSeries := make([]int64, len(d.Series))
	var total int64
	for _, day := range d.Days {
		require.Len(t, day.Counts, len(d.Series))
		var sum int64
		for i, n := range day.Counts {
			perSeries[i] += n
			sum += n
		}
		require.Equal(t, sum, day.Total)
		total += day.Total
	}
	require.Equal(t, []int64{3, 4, 1}, perSeries, "the 20-day-old duplicates are not drawn")
	require.Equal(t, int64(8), total)
	tenDaysAgo := int(today.Sub(now.Add(-10*24*time.Hour).UTC().Truncate(24*time.Hour)) / (24 * time.Hour))
	require.Equal(t, int64(1), d.Days[dashboard.ChartDays-1-tenDaysAgo].Counts[1], "ORDERS05's keyed duplicate 10 days ago")

	// The most duplicated types over 7 days: 3 of 4, 3 of 8, 1 of 5.
	require.Equal(t, []string{"acme/INVOIC02", "acme/ORDERS05", "globex/SHOP_ORDER"}, names(d.Top))
	require.InDelta(t, 0.75, d.Top[0].Ratio(), 1e-9)
	require.InDelta(t, 0.375, d.Top[1].Ratio(), 1e-9)
	require.InDelta(t, 0.2, d.Top[2].Ratio(), 1e-9)
	require.Equal(t, dashboard.Window{Day: 3, Week: 5}, d.Top[1].Received)
	require.Equal(t, dashboard.Window{Day: 2, Week: 3}, d.Top[1].Blocked)
}

func TestLoadKeepsToTheScopeAndTheTenantAskedFor(t *testing.T) {
	t.Parallel()
	s := fill(t)
	svc := dashboard.New(s.pool)
	ctx := context.Background()
	now := time.Now()

	acme, err := svc.Load(ctx, auth.TenantScope(s.acme), "", now)
	require.NoError(t, err)
	require.Equal(t, []string{"acme"}, acme.Tenants)
	require.Equal(t, dashboard.Window{Day: 4, Week: 6}, acme.Received)
	require.Equal(t, dashboard.Window{Day: 5, Week: 6}, acme.Blocked.Total)
	require.Equal(t, []string{"acme/INVOIC02", "acme/ORDERS05"}, names(acme.Series))

	narrowed, err := svc.Load(ctx, auth.GlobalScope(), "acme", now)
	require.NoError(t, err)
	narrowed.Tenants = acme.Tenants
	narrowed.Tenant = ""
	require.Equal(t, acme, narrowed, "a global user narrowed to acme sees what acme's users see")

	for _, tc := range []struct {
		scope  auth.Scope
		tenant string
	}{{auth.TenantScope(s.acme), "globex"}, {auth.GlobalScope(), "initech"}, {auth.Scope{}, ""}} {
		d, err := svc.Load(ctx, tc.scope, tc.tenant, now)
		require.NoError(t, err)
		require.Zero(t, d.Received)
		require.Zero(t, d.Blocked)
		require.Empty(t, d.Top)
		if tc.tenant != "" {
			require.Equal(t, `there is no tenant "`+tc.tenant+`"`, d.Problem)
		}
	}
}

func names(types []dashboard.Type) []string {
	out := make([]string, len(types))
	for i, t := range types {
		out[i] = t.Tenant + "/" + t.Code
	}
	return out
}

// A copy that differed only in shape is counted apart from identical and
// changed ones.
func TestLoadCountsShapeOnlyCopiesApart(t *testing.T) {
	t.Parallel()
	s := setup(t)
	s.blocked(t, "ORDERS05", "fingerprint", "shape_only", 2, "2 hours")
	s.blocked(t, "ORDERS05", "fingerprint", "changed", 1, "2 hours")
	d, err := dashboard.New(s.pool).Load(context.Background(), auth.GlobalScope(), "", time.Now())
	require.NoError(t, err)
	require.Equal(t, dashboard.Window{Day: 2, Week: 2}, d.Blocked.ShapeOnly)
	require.Equal(t, dashboard.Window{Day: 1, Week: 1}, d.Blocked.Changed)
	require.Equal(t, dashboard.Window{}, d.Blocked.Identical)
}

// The dashboard reads the same numbers once the traffic is rolled up into
// hours, and what arrives after the rollup shows at once, counted from the
// tables until the next step.
func TestLoadIsTheSameAfterARollup(t *testing.T) {
	t.Parallel()
	s := fill(t)
	svc := dashboard.New(s.pool)
	ctx := context.Background()
	now := time.Now()
	for _, scope := range []auth.Scope{auth.GlobalScope(), auth.TenantScope(s.acme)} {
		before, err := svc.Load(ctx, scope, "", now)
		require.NoError(t, err)
		require.NoError(t, rollup.New(s.pool, slog.Default(), 0).CatchUp(ctx))
		require.Positive(t, pgtest.Count(t, s.pool, `SELECT count(*) FROM traffic_blocked_hourly`))
		after, err := svc.Load(ctx, scope, "", now)
		require.NoError(t, err)
		require.Equal(t, before, after)
	}

	s.messages(t, "ORDERS05", 2, "0 seconds")
	s.blocked(t, "ORDERS05", "fingerprint", "shape_only", 1, "0 seconds")
	d, err := svc.Load(ctx, auth.GlobalScope(), "", now)
	require.NoError(t, err)
	require.Equal(t, dashboard.Window{Day: 10, Week: 12}, d.Received)
	require.Equal(t, dashboard.Window{Day: 7, Week: 8}, d.Blocked.Total)
	require.Equal(t, dashboard.Window{Day: 1, Week: 1}, d.Blocked.ShapeOnly)
}

// A bulk load (a backlog imported, or a burst of intake) shows on the
// dashboard exactly, at once and after every rollup step: before the first
// step, when all of it is read from the tables; after a step, from the
// hours and the first hour of each window; and a second load after the
// step, from the tail since the watermark. The loads are stamped every 97
// seconds over the last 8 days, so that the edges of both windows cut
// through loaded hours, and the expected numbers are a count(*) of the rows.
func TestLoadIsExactRightAfterABulkLoad(t *testing.T) {
	t.Parallel()
	s := setup(t)
	ctx := context.Background()
	svc := dashboard.New(s.pool)
	roller := rollup.New(s.pool, slog.Default(), 0)
	const load = `
		WITH loaded AS (
		    INSERT INTO messages (tenant_id, environment_id, message_type_id, payload, content_hash, source_endpoint, received_at)
		    SELECT mt.tenant_id, $1, mt.id, '{}', decode(repeat('00', 32), 'hex'), 'receive-message',
		           now() - g * $2::interval
		    FROM generate_series(0, $3) g JOIN message_types mt ON mt.id = $4
		    RETURNING tenant_id, environment_id, message_type_id, received_at
		)
		INSERT INTO audit_events (tenant_id, environment_id, message_type_id, action, actor, details, created_at)
		SELECT tenant_id, environment_id, message_type_id, 'message.duplicate_blocked', 'test',
		       jsonb_build_object('mode', 'fingerprint', 'content', 'identical'), received_at
		FROM loaded`
	bulk := func(spacing string, n int) {
		t.Helper()
		mt := s.types["ORDERS05"]
		_, err := s.pool.Exec(ctx, load, s.envOf(mt), spacing, n-1, mt.ID)
		require.NoError(t, err)
	}
	requireExact := func(when string) {
		t.Helper()
		var want dashboard.Window
		require.NoError(t, s.pool.QueryRow(ctx, `
			SELECT count(*) FILTER (WHERE received_at > now() - interval '24 hours'),
			       count(*) FILTER (WHERE received_at > now() - interval '7 days')
			FROM messages`).Scan(&want.Day, &want.Week))
		d, err := svc.Load(ctx, auth.GlobalScope(), "", time.Now())
		require.NoError(t, err)
		require.Equal(t, want, d.Received, "messages %s", when)
		require.Equal(t, want, d.Blocked.Total, "blocked duplicates %s", when)
		require.Equal(t, want, d.Blocked.Identical, "identical blocked duplicates %s", when)
	}

	bulk("97 seconds", 8*24*3600/97)
	requireExact("before the first rollup step")
	require.NoError(t, roller.CatchUp(ctx))
	requireExact("after the first rollup step")
	bulk("0 seconds", 500) // stamped now, as intake stamps them: after the watermark
	requireExact("after a load that followed the step")
	require.NoError(t, roller.CatchUp(ctx))
	requireExact("after the next step")
}
