package alert_test

import (
	"context"
	"encoding/json"
	"log/slog"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"

	"github.com/lefia/edihub/internal/alert"
	"github.com/lefia/edihub/internal/auth"
	"github.com/lefia/edihub/internal/config"
	"github.com/lefia/edihub/internal/db"
	"github.com/lefia/edihub/internal/delivery"
	"github.com/lefia/edihub/internal/egress"
	"github.com/lefia/edihub/internal/ingest"
	"github.com/lefia/edihub/internal/messagetype"
	"github.com/lefia/edihub/internal/notify"
	"github.com/lefia/edihub/internal/pgtest"
	"github.com/lefia/edihub/internal/provision"
	"github.com/lefia/edihub/internal/refused"
	"github.com/lefia/edihub/internal/testfactory"
)

// testBundle is a database with tenant acme, its production environment
// and message type ORDERS05, and an evaluator whose clock the test moves.
type testBundle struct {
	pool       *pgxpool.Pool
	tenant     db.Tenant
	env        db.Environment
	mt         db.MessageType
	deliveries *delivery.Service
	ingest     *ingest.Service
	clock      *clock
	eval       *alert.Evaluator
}

// clock is a time the test sets, starting at the real time.
type clock struct {
	mu sync.Mutex
	at time.Time
}

func (c *clock) now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.at
}

func (c *clock) advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.at = c.at.Add(d)
}

func defaults(t testing.TB) config.Alerts {
	t.Helper()
	cfg, err := config.Load(func(string) string { return "" })
	require.NoError(t, err)
	return cfg.Alerts
}

func setup(t testing.TB) *testBundle {
	t.Helper()
	return setupOn(t, pgtest.Pool(t))
}

// setupOn is setup on pool's database, already migrated.
func setupOn(t testing.TB, pool *pgxpool.Pool) *testBundle {
	t.Helper()
	tenant, env := testfactory.TenantWithEnvironment(t, pool, "acme")
	b := &testBundle{
		pool: pool, tenant: tenant, env: env, clock: &clock{at: time.Now()},
		mt:         testfactory.MessageType(t, pool, &testfactory.MessageTypeOpts{Fields: []string{"id"}}),
		deliveries: delivery.NewService(pool, 3),
	}
	b.ingest = ingest.New(pool, time.Hour, b.deliveries)
	b.eval = b.evaluator(t)
	b.channel(t, "acme", "ops@acme.example")
	return b
}

// channel creates a notification channel of tenant ("": global) that
// emails to.
func (b *testBundle) channel(t testing.TB, tenant, to string) {
	t.Helper()
	_, _, err := provision.New(b.pool).CreateChannel(context.Background(), provision.ChannelSpec{
		TenantSlug: tenant, Kind: notify.KindEmail, Target: to,
	}, egress.Policy{})
	require.NoError(t, err)
}

// notified lists the notifications written, "rule event" each, in order.
func (b *testBundle) notified(t testing.TB) []string {
	t.Helper()
	return pgtest.Column[string](t, b.pool, `SELECT rule || ' ' || event FROM notifications ORDER BY id`)
}

// evaluator is another evaluator on the bundle's database and clock, as
// another replica runs.
func (b *testBundle) evaluator(t testing.TB, opts ...alert.Option) *alert.Evaluator {
	t.Helper()
	return alert.New(b.pool, slog.New(slog.DiscardHandler), defaults(t), b.deliveries,
		append([]alert.Option{alert.WithClock(b.clock.now)}, opts...)...)
}

func (b *testBundle) evaluate(t testing.TB) alert.Round {
	t.Helper()
	round, err := b.eval.Evaluate(context.Background())
	require.NoError(t, err)
	require.True(t, round.Ran)
	require.Empty(t, round.Failed)
	return round
}

func (b *testBundle) exec(t testing.TB, sql string, args ...any) {
	t.Helper()
	_, err := b.pool.Exec(context.Background(), sql, args...)
	require.NoError(t, err)
}

// alertRow is one alert as stored.
type alertRow struct {
	ID       int64
	TenantID *int64
	Rule     string
	Subject  string
	State    string
	Title    string
	Lines    []string
}

func (b *testBundle) alerts(t testing.TB) []alertRow {
	t.Helper()
	rows, err := b.pool.Query(context.Background(),
		`SELECT id, tenant_id, rule, subject_kind || ':' || subject_key, state, title, details FROM alerts ORDER BY id`)
	require.NoError(t, err)
	defer rows.Close()
	var out []alertRow
	for rows.Next() {
		var a alertRow
		var details []byte
		require.NoError(t, rows.Scan(&a.ID, &a.TenantID, &a.Rule, &a.Subject, &a.State, &a.Title, &details))
		var d alert.Details
		require.NoError(t, json.Unmarshal(details, &d))
		a.Lines = d.Lines
		out = append(out, a)
	}
	require.NoError(t, rows.Err())
	return out
}

// destination creates a destination of the production environment.
func (b *testBundle) destination(t testing.TB) int64 {
	t.Helper()
	id, _ := testfactory.Destination(t, b.pool, testfactory.DestinationOpts{URL: "http://127.0.0.1:9/in"})
	return id
}

// receive stores a message, with a delivery to every destination.
func (b *testBundle) receive(t testing.TB, id string) {
	t.Helper()
	_, err := b.ingest.Receive(context.Background(), ingest.Request{
		TenantID: b.tenant.ID, EnvironmentID: b.env.ID, MessageType: messagetype.Prepare(b.mt), Docnum: "D-" + id,
		Payload: []byte(`{"id": "` + id + `"}`), Source: ingest.Source{Endpoint: ingest.EndpointReceiveMessage, Actor: "test"},
	})
	require.NoError(t, err)
}

// requireOneAlert checks that the only alert is of rule and subject, in
// state, and returns it.
func (b *testBundle) requireOneAlert(t testing.TB, rule, subject, state string) alertRow {
	t.Helper()
	all := b.alerts(t)
	require.Len(t, all, 1, "%+v", all)
	require.Equal(t, rule, all[0].Rule)
	require.Equal(t, subject, all[0].Subject)
	require.Equal(t, state, all[0].State)
	return all[0]
}

func (b *testBundle) auditActions(t testing.TB) []string {
	t.Helper()
	return pgtest.Column[string](t, b.pool, `SELECT action FROM audit_events WHERE action LIKE 'alert.%' ORDER BY created_at, id`)
}

func TestDestinationFailingOpensOnceAndResolves(t *testing.T) {
	t.Parallel()
	b := setup(t)
	dest := b.destination(t)
	subject := "destination:" + strconv.FormatInt(dest, 10)
	b.exec(t, `UPDATE destinations SET failing_since = $1 WHERE id = $2`, b.clock.now().Add(-9*time.Minute), dest)
	require.Zero(t, b.evaluate(t).Opened, "failing for less than ALERT_DESTINATION_FAILING_FOR")

	b.clock.advance(2 * time.Minute)
	require.Equal(t, 1, b.evaluate(t).Opened)
	a := b.requireOneAlert(t, alert.DestinationFailing, subject, alert.Open)
	require.Equal(t, b.tenant.ID, *a.TenantID)
	require.Contains(t, a.Title, "Destination #"+strconv.FormatInt(dest, 10)+" of acme/production is failing")
	require.Contains(t, a.Lines, "tenant acme, environment production")
	require.Zero(t, b.evaluate(t).Opened, "opened once")
	require.Equal(t, []string{"destination.failing opened"}, b.notified(t))

	b.exec(t, `UPDATE destinations SET failing_since = NULL WHERE id = $1`, dest)
	require.Equal(t, 1, b.evaluate(t).Resolved)
	b.requireOneAlert(t, alert.DestinationFailing, subject, alert.Resolved)
	require.Zero(t, b.evaluate(t).Resolved, "said once")
	require.Equal(t, []string{"destination.failing opened", "destination.failing resolved"}, b.notified(t))
	require.Equal(t, []string{"alert.opened", "alert.resolved"}, b.auditActions(t))

	// A failed delivery opens it too, until an admin's retry is delivered.
	b.receive(t, "1")
	b.exec(t, `UPDATE deliveries SET status = 'failed' WHERE destination_id = $1`, dest)
	require.Equal(t, 1, b.evaluate(t).Opened)
	require.Contains(t, b.alerts(t)[1].Lines, "1 deliveries failed and wait for an admin's retry")
	b.exec(t, `UPDATE deliveries SET status = 'delivered' WHERE destination_id = $1`, dest)
	require.Equal(t, 1, b.evaluate(t).Resolved)
}

func TestDeliveryLaggingOpensAndResolves(t *testing.T) {
	t.Parallel()
	b := setup(t)
	dest := b.destination(t)
	b.receive(t, "1")
	require.Zero(t, b.evaluate(t).Opened)
	b.clock.advance(16 * time.Minute)
	require.Equal(t, 1, b.evaluate(t).Opened)
	a := b.requireOneAlert(t, alert.DeliveryLagging, "destination:"+strconv.FormatInt(dest, 10), alert.Open)
	require.Contains(t, a.Lines, "1 deliveries have waited longer than 15m0s")

	// A paused destination is not lagging: it was stopped on purpose.
	require.NoError(t, b.deliveries.SetPaused(context.Background(), "test", auth.GlobalScope(), dest, true))
	require.Equal(t, 1, b.evaluate(t).Resolved)
	require.NoError(t, b.deliveries.SetPaused(context.Background(), "test", auth.GlobalScope(), dest, false))
	require.Equal(t, 1, b.evaluate(t).Opened)
	b.exec(t, `UPDATE deliveries SET status = 'delivered' WHERE destination_id = $1`, dest)
	require.Equal(t, 1, b.evaluate(t).Resolved)
}

func TestDuplicatesSpikeOpensAboveItsAverageAndResolves(t *testing.T) {
	t.Parallel()
	b := setup(t)
	blocked := func(n int, at time.Time) {
		b.exec(t, `INSERT INTO audit_events (tenant_id, message_type_id, action, actor, details, created_at)
			SELECT $1, $2, 'message.duplicate_blocked', 'test', '{}', $3 FROM generate_series(1, $4)`, b.tenant.ID, b.mt.ID, at, n)
	}
	blocked(20, b.clock.now().Add(-time.Minute))
	require.Zero(t, b.evaluate(t).Opened, "20 is not more than ALERT_DUPLICATE_SPIKE_MIN")
	blocked(5, b.clock.now().Add(-time.Minute))
	require.Equal(t, 1, b.evaluate(t).Opened)
	a := b.requireOneAlert(t, alert.DuplicatesSpike, "message_type:"+strconv.FormatInt(b.mt.ID, 10), alert.Open)
	require.Contains(t, a.Lines, "25 duplicates blocked in the last hour")

	// A type that blocks as many every hour does not spike: the week's
	// hours hold 10 an hour, and 25 is not more than 5 times that.
	b.exec(t, `INSERT INTO traffic_blocked_hourly (tenant_id, message_type_id, hour, blocked, fingerprint, idempotency_key, identical, shape_only, changed)
		SELECT $1, $2, h, 10, 10, 0, 10, 0, 0
		FROM generate_series(date_trunc('hour', $3::timestamptz) - interval '168 hours', date_trunc('hour', $3::timestamptz) - interval '2 hours', interval '1 hour') h`,
		b.tenant.ID, b.mt.ID, b.clock.now())
	require.Equal(t, 1, b.evaluate(t).Resolved)

	b.exec(t, `DELETE FROM traffic_blocked_hourly`)
	require.Equal(t, 1, b.evaluate(t).Opened)
	b.clock.advance(2 * time.Hour)
	require.Equal(t, 1, b.evaluate(t).Resolved, "the hour has passed")
}

func TestIntakeRefusingOpensAndResolves(t *testing.T) {
	t.Parallel()
	b := setup(t)
	counts := refused.New()
	key := refused.Subject{Kind: refused.KindAPIKey, Key: "42", TenantID: b.tenant.ID}
	for range 19 {
		counts.Count(key)
	}
	require.NoError(t, counts.Flush(context.Background(), b.pool))
	require.Zero(t, b.evaluate(t).Opened, "19 is fewer than ALERT_REFUSALS_MIN")
	counts.Count(key)
	require.NoError(t, counts.Flush(context.Background(), b.pool))
	require.Equal(t, 1, b.evaluate(t).Opened)
	a := b.requireOneAlert(t, alert.IntakeRefusing, "api_key:42", alert.Open)
	require.Contains(t, a.Title, "API key #42 of acme")

	b.clock.advance(16 * time.Minute)
	require.Equal(t, 1, b.evaluate(t).Resolved)
}

func TestSecretExpiringOpensAndResolves(t *testing.T) {
	t.Parallel()
	b := setup(t)
	testfactory.APIKey(t, b.pool, nil)
	b.exec(t, `UPDATE api_keys SET revoked_at = $1`, b.clock.now().Add(30*time.Hour))
	integration, _ := testfactory.Integration(t, b.pool, testfactory.IntegrationOpts{Scheme: "github"})
	b.exec(t, `UPDATE integration_secrets SET expires_at = $1`, b.clock.now().Add(36*time.Hour))
	require.Zero(t, b.evaluate(t).Opened, "more than 24 hours left")

	b.clock.advance(7 * time.Hour)
	require.Equal(t, 1, b.evaluate(t).Opened, "the key's grace ends within 24 hours")
	b.clock.advance(6 * time.Hour)
	require.Equal(t, 1, b.evaluate(t).Opened, "the integration secret's too")
	all := b.alerts(t)
	require.Equal(t, alert.SecretExpiring, all[1].Rule)
	require.Contains(t, all[1].Title, "integration "+integration)

	b.clock.advance(18 * time.Hour)
	require.Equal(t, 1, b.evaluate(t).Resolved, "the key's grace ended")
	b.clock.advance(6 * time.Hour)
	require.Equal(t, 1, b.evaluate(t).Resolved)
}

func TestHousekeepingFailingIsGlobal(t *testing.T) {
	t.Parallel()
	b := setup(t)
	q := db.On(b.pool)
	record := func(errText string) {
		require.NoError(t, q.RetentionSweepRecord(context.Background(), db.RetentionSweepRecordParams{Kind: "messages", Error: errText}))
	}
	record("deadlock detected")
	record("deadlock detected")
	require.Zero(t, b.evaluate(t).Opened)
	record("deadlock detected")
	require.Equal(t, 1, b.evaluate(t).Opened)
	a := b.requireOneAlert(t, alert.HousekeepingFailing, "housekeeping:retention:messages", alert.Open)
	require.Nil(t, a.TenantID, "a global alert")

	b.exec(t, `UPDATE traffic_rollup_state SET failed_rounds = 3, last_error = 'boom'`)
	require.Equal(t, 1, b.evaluate(t).Opened, "the rollup has its own")
	record("")
	b.exec(t, `UPDATE traffic_rollup_state SET failed_rounds = 0`)
	require.Equal(t, 2, b.evaluate(t).Resolved)
}

// A destination whose every attempt has failed for
// DESTINATION_AUTO_PAUSE_AFTER is paused, with its own alert, which
// resolves when an admin resumes it; the resumed destination is given the
// whole period again.
func TestAutoPause(t *testing.T) {
	t.Parallel()
	b := setup(t)
	dest := b.destination(t)
	b.exec(t, `UPDATE destinations SET failing_since = $1 WHERE id = $2`, b.clock.now().Add(-23*time.Hour), dest)
	round := b.evaluate(t)
	require.Zero(t, round.Paused)
	require.Equal(t, 1, round.Opened, "failing")

	b.clock.advance(time.Hour)
	round = b.evaluate(t)
	require.Equal(t, 1, round.Paused)
	require.Equal(t, 1, round.Opened, "paused")
	require.Equal(t, 1, pgtest.Count(t, b.pool, `SELECT count(*) FROM destinations WHERE id = $1 AND paused`, dest))
	require.Equal(t, []string{"destination.failing opened", "destination.auto_paused opened"}, b.notified(t))

	require.NoError(t, b.deliveries.SetPaused(context.Background(), "user:1", auth.GlobalScope(), dest, false))
	round = b.evaluate(t)
	require.Equal(t, 1, round.Resolved)
	require.Zero(t, round.Paused, "resumed: given the period again")
	require.Equal(t, 1, pgtest.Count(t, b.pool, `SELECT count(*) FROM alerts WHERE rule = 'destination.failing' AND state = 'open'`),
		"its attempts are still failing")

	cfg := defaults(t)
	cfg.AutoPauseAfter = 0
	off := alert.New(b.pool, slog.New(slog.DiscardHandler), cfg, b.deliveries, alert.WithClock(b.clock.now))
	b.clock.advance(48 * time.Hour)
	round, err := off.Evaluate(context.Background())
	require.NoError(t, err)
	require.Zero(t, round.Paused, "DESTINATION_AUTO_PAUSE_AFTER=off")
}

// An open alert reminds every ALERT_RENOTIFY until it is acknowledged.
func TestRemindersUntilAcknowledged(t *testing.T) {
	t.Parallel()
	b := setup(t)
	dest := b.destination(t)
	b.exec(t, `UPDATE destinations SET failing_since = $1 WHERE id = $2`, b.clock.now().Add(-time.Hour), dest)
	b.evaluate(t)
	b.clock.advance(4*time.Hour - time.Second)
	require.Zero(t, b.evaluate(t).Reminded)
	b.clock.advance(time.Second)
	require.Equal(t, 1, b.evaluate(t).Reminded)
	require.Zero(t, b.evaluate(t).Reminded, "the next one is due ALERT_RENOTIFY later")
	b.clock.advance(4 * time.Hour)
	require.Equal(t, 1, b.evaluate(t).Reminded)
	require.Equal(t, []string{"destination.failing opened", "destination.failing reminder", "destination.failing reminder"}, b.notified(t))

	admin := testfactory.User(t, b.pool, nil)
	id := b.alerts(t)[0].ID
	require.NoError(t, alert.NewService(b.pool).Acknowledge(context.Background(), admin, id))
	b.requireOneAlert(t, alert.DestinationFailing, "destination:"+strconv.FormatInt(dest, 10), alert.Acknowledged)
	b.clock.advance(12 * time.Hour)
	require.Zero(t, b.evaluate(t).Reminded, "acknowledged: no more reminders")

	b.exec(t, `UPDATE destinations SET failing_since = NULL WHERE id = $1`, dest)
	require.Equal(t, 1, b.evaluate(t).Resolved, "an acknowledged alert resolves too, and says so")
	require.Equal(t, "destination.failing resolved", b.notified(t)[3])
	require.Equal(t, []string{"alert.opened", "alert.acknowledged", "alert.resolved"}, b.auditActions(t))
}

// Evaluators of several replicas racing open one alert and notify each
// channel once: the tenant's and the global one.
func TestRacingEvaluatorsOpenOneAlert(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.channel(t, "", "oncall@example.com")
	dest := b.destination(t)
	b.exec(t, `UPDATE destinations SET failing_since = $1 WHERE id = $2`, b.clock.now().Add(-time.Hour), dest)
	var wg sync.WaitGroup
	for range 8 {
		e := b.evaluator(t)
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 5 {
				_, err := e.Evaluate(context.Background())
				require.NoError(t, err)
			}
		}()
	}
	wg.Wait()
	require.Len(t, b.alerts(t), 1)
	require.Equal(t, []string{"destination.failing opened", "destination.failing opened"}, b.notified(t))
	require.Equal(t, 2, pgtest.Count(t, b.pool, `SELECT count(DISTINCT channel_id) FROM notifications`))
	require.Equal(t, []string{"alert.opened"}, b.auditActions(t))
}

// A rule whose statement fails is rolled back alone: the round goes on,
// and the next round tries it again.
func TestAFailingRuleDoesNotStopTheOthers(t *testing.T) {
	t.Parallel()
	b := setup(t)
	e := b.evaluator(t, alert.WithBrokenRule())
	var failed []string
	e.OnRule = func(rule string, err error) {
		if err != nil {
			failed = append(failed, rule)
		}
	}
	dest := b.destination(t)
	b.exec(t, `UPDATE destinations SET failing_since = $1 WHERE id = $2`, b.clock.now().Add(-time.Hour), dest)
	for range 2 {
		round, err := e.Evaluate(context.Background())
		require.NoError(t, err)
		require.Equal(t, []string{"broken.rule"}, round.Failed)
	}
	require.Len(t, b.alerts(t), 1, "the rule after it was evaluated")
	require.Empty(t, failed, "only the known rules are counted by name")
}

// A tenant's users see their tenant's alerts only, never a global one;
// viewers cannot acknowledge.
func TestTenantIsolation(t *testing.T) {
	t.Parallel()
	b := setup(t)
	other, _ := testfactory.TenantWithEnvironment(t, b.pool, "globex")
	ours := b.destination(t)
	theirs, _ := testfactory.Destination(t, b.pool, testfactory.DestinationOpts{Tenant: "globex", URL: "http://127.0.0.1:9/x"})
	b.exec(t, `UPDATE destinations SET failing_since = $1`, b.clock.now().Add(-time.Hour))
	b.exec(t, `UPDATE traffic_rollup_state SET failed_rounds = 3`)
	require.Equal(t, 3, b.evaluate(t).Opened)

	svc := alert.NewService(b.pool)
	ctx := context.Background()
	acmeAdmin := testfactory.User(t, b.pool, &testfactory.UserOpts{Email: "a@acme.example", Tenant: "acme"})
	acmeViewer := testfactory.User(t, b.pool, &testfactory.UserOpts{Email: "v@acme.example", Tenant: "acme", Role: auth.RoleViewer})
	global := testfactory.User(t, b.pool, &testfactory.UserOpts{Email: "g@example.com"})

	page, err := svc.List(ctx, acmeAdmin.Scope(), alert.Filter{})
	require.NoError(t, err)
	require.Len(t, page.Alerts, 1)
	require.Equal(t, "destination:"+strconv.FormatInt(ours, 10), page.Alerts[0].Subject.Kind+":"+page.Alerts[0].Subject.Key)
	page, err = svc.List(ctx, global.Scope(), alert.Filter{})
	require.NoError(t, err)
	require.Len(t, page.Alerts, 3)
	page, err = svc.List(ctx, global.Scope(), alert.Filter{Tenant: "globex", State: alert.Open, Rule: alert.DestinationFailing})
	require.NoError(t, err)
	require.Len(t, page.Alerts, 1)
	require.Equal(t, strconv.FormatInt(theirs, 10), page.Alerts[0].Subject.Key)
	page, err = svc.List(ctx, acmeAdmin.Scope(), alert.Filter{Tenant: "globex"})
	require.NoError(t, err)
	require.NotEmpty(t, page.Problems, "another tenant is not found")
	unresolved, err := svc.Unresolved(ctx, acmeAdmin.Scope())
	require.NoError(t, err)
	require.Len(t, unresolved, 1)

	var theirsID, globalID int64
	for _, a := range b.alerts(t) {
		switch {
		case a.TenantID == nil:
			globalID = a.ID
		case *a.TenantID == other.ID:
			theirsID = a.ID
		}
	}
	for _, id := range []int64{theirsID, globalID} {
		_, err := svc.Get(ctx, acmeAdmin.Scope(), id)
		require.ErrorContains(t, err, "does not exist")
		require.ErrorContains(t, svc.Acknowledge(ctx, acmeAdmin, id), "not an open alert you can acknowledge")
	}
	acme, err := svc.Unresolved(ctx, acmeAdmin.Scope())
	require.NoError(t, err)
	require.ErrorIs(t, svc.Acknowledge(ctx, acmeViewer, acme[0].ID), auth.ErrAdminOnly)
	require.NoError(t, svc.Acknowledge(ctx, acmeAdmin, acme[0].ID))
	got, err := svc.Get(ctx, acmeAdmin.Scope(), acme[0].ID)
	require.NoError(t, err)
	require.Equal(t, alert.Acknowledged, got.State)
	require.Equal(t, "a@acme.example", got.AcknowledgedBy)
}

// Without the round's lock, the unique index decides: a second transaction
// opening the same rule and subject waits for the first, then opens
// nothing and notifies nobody.
func TestTheDatabaseDecidesARaceToOpen(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := context.Background()
	f := alert.Finding{TenantID: &b.tenant.ID, Subject: alert.Subject{Kind: alert.SubjectDestination, Key: "7"}, Title: "Destination #7 is failing"}
	first, err := b.pool.Begin(ctx)
	require.NoError(t, err)
	defer func() { _ = first.Rollback(ctx) }()
	opened, err := b.eval.OpenTx(ctx, first, alert.DestinationFailing, f)
	require.NoError(t, err)
	require.True(t, opened)

	second := make(chan bool, 1)
	go func() {
		var opened bool
		err := db.WithPgxTx(ctx, b.pool, func(tx pgx.Tx) error {
			var err error
			opened, err = b.evaluator(t).OpenTx(ctx, tx, alert.DestinationFailing, f)
			return err
		})
		require.NoError(t, err)
		second <- opened
	}()
	select {
	case <-second:
		t.Fatal("the second transaction did not wait for the first")
	case <-time.After(300 * time.Millisecond):
	}
	require.NoError(t, first.Commit(ctx))
	require.False(t, <-second)
	require.Len(t, b.alerts(t), 1)
	require.Equal(t, []string{"destination.failing opened"}, b.notified(t))
}
