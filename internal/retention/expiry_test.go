package retention_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"

	"github.com/lefia/edihub/internal/config"
	"github.com/lefia/edihub/internal/db"
	"github.com/lefia/edihub/internal/delivery"
	"github.com/lefia/edihub/internal/ingest"
	"github.com/lefia/edihub/internal/messagetype"
	"github.com/lefia/edihub/internal/pgtest"
	"github.com/lefia/edihub/internal/retention"
	"github.com/lefia/edihub/internal/testfactory"
)

const day = 24 * time.Hour

// keyTTL is the IDEMPOTENCY_KEY_TTL the sites' ingest runs with.
const keyTTL = time.Hour

// policy keeps messages a day (less than any duplicate window, so that the
// windows decide), and keeps blocked copies and delivery attempts forever
// unless a test says otherwise.
var policy = retention.Policy{Periods: config.Retention{Messages: day}, KeyTTL: keyTTL}

// site is one tenant's environment receiving messages of a type whose
// business key is the payload's "id".
type site struct {
	pool   *pgxpool.Pool
	in     *ingest.Service
	tenant db.Tenant
	env    db.Environment
	types  map[string]db.MessageType
}

// newSite creates a tenant whose message types have the given windows
// (hours; 0: the default).
func newSite(t *testing.T, pool *pgxpool.Pool, slug string, windows map[string]int) *site {
	t.Helper()
	tenant, env := testfactory.TenantWithEnvironment(t, pool, slug)
	s := &site{pool: pool, in: ingest.New(pool, keyTTL, delivery.NewService(pool, 3)), tenant: tenant, env: env,
		types: map[string]db.MessageType{}}
	for code, hours := range windows {
		opts := &testfactory.MessageTypeOpts{Tenant: slug, Code: code, Fields: []string{"id"}}
		if hours > 0 {
			opts.WindowHours = &hours
		}
		s.types[code] = testfactory.MessageType(t, pool, opts)
	}
	return s
}

func (s *site) receive(t *testing.T, code, payload, key string) ingest.Result {
	t.Helper()
	res, err := s.in.Receive(context.Background(), ingest.Request{
		TenantID: s.tenant.ID, EnvironmentID: s.env.ID, MessageType: messagetype.Prepare(s.types[code]), Payload: []byte(payload),
		IdempotencyKey: key,
		Source:         ingest.Source{Endpoint: ingest.EndpointReceiveMessage, RemoteAddr: "192.0.2.1", Actor: "test"},
	})
	require.NoError(t, err)
	return res
}

// stored receives a new message and makes it age old.
func (s *site) stored(t *testing.T, code, payload, key string, age time.Duration) int64 {
	t.Helper()
	res := s.receive(t, code, payload, key)
	require.Equal(t, ingest.Created, res.Outcome)
	s.age(t, res.MessageID, age)
	return res.MessageID
}

// age makes a stored message old, as if it had been received age ago.
func (s *site) age(t *testing.T, id int64, age time.Duration) {
	t.Helper()
	s.exec(t, `UPDATE messages SET received_at = now() - make_interval(secs => $2) WHERE id = $1`, id, age.Seconds())
}

// ageCopies makes the blocked copies that where selects (of c) old, as if
// received age ago. A copy is received when its event is created, which
// the key between them holds (migration 015), and events are append-only:
// the two are aged together, with the append-only trigger off meanwhile.
func (s *site) ageCopies(t *testing.T, where string, age time.Duration) {
	t.Helper()
	s.exec(t, `ALTER TABLE audit_events DISABLE TRIGGER audit_events_append_only`)
	s.exec(t, `
		WITH aged AS (
			UPDATE audit_events e SET created_at = e.created_at - make_interval(secs => $1)
			FROM blocked_copies c WHERE c.audit_event_id = e.id AND c.received_at = e.created_at AND `+where+`
			RETURNING e.id, e.created_at
		)
		UPDATE blocked_copies c SET received_at = aged.created_at FROM aged WHERE c.audit_event_id = aged.id`, age.Seconds())
	s.exec(t, `ALTER TABLE audit_events ENABLE TRIGGER audit_events_append_only`)
}

func (s *site) exec(t *testing.T, sql string, args ...any) {
	t.Helper()
	_, err := s.pool.Exec(context.Background(), sql, args...)
	require.NoError(t, err)
}

func exists(t *testing.T, pool *pgxpool.Pool, table string, id int64) bool {
	t.Helper()
	return pgtest.Count(t, pool, `SELECT count(*) FROM `+table+` WHERE id = $1`, id) == 1
}

func sweeper(pool *pgxpool.Pool, batch int32, p retention.Policy) *retention.Sweeper {
	return retention.NewSweeper(pool, slog.New(slog.NewTextHandler(io.Discard, nil)), batch, time.Millisecond, p)
}

// A message goes once it is older than its tenant's effective retention:
// RETENTION_MESSAGES raised to the tenant's longest duplicate window (NULL
// being the default window) and to IDEMPOTENCY_KEY_TTL, plus the grace.
// What hangs on it goes in the same transaction; what still needs it (an
// unfinished delivery, an unexpired idempotency key) keeps it.
func TestSweepExpiresMessagesPastTheirTenantsRetention(t *testing.T) {
	t.Parallel()
	pool := pgtest.Pool(t)
	acme := newSite(t, pool, "acme", map[string]int{"ORDERS": 0, "DELIV": 24})
	long := newSite(t, pool, "long", map[string]int{"SHORT": 12, "LONG": 720})
	destination, _ := testfactory.Destination(t, pool, testfactory.DestinationOpts{
		Tenant: "acme", URL: "http://127.0.0.1:9/", MessageTypes: []string{"DELIV"}})

	// acme's longest window is the default week (ORDERS); long's is LONG's
	// 30 days: the admin shows the same periods the sweep keeps to.
	acmeKeep := policy.MessageRetention("ORDERS", 168)
	require.Equal(t, retention.MessageRetention{Period: 168 * time.Hour, Reason: "window", WindowType: "ORDERS"}, acmeKeep)
	longKeep := policy.MessageRetention("LONG", 720).Period
	require.Equal(t, 720*time.Hour, longKeep)

	// The old order gets a changed copy blocked against it while it is
	// young, and the copy of another one is released as it.
	oldOrder := acme.stored(t, "ORDERS", `{"id": "A"}`, "", 0)
	require.Equal(t, ingest.DuplicateFingerprint, acme.receive(t, "ORDERS", `{"id": "A", "n": 2}`, "").Outcome)
	acme.age(t, oldOrder, acmeKeep.Period+retention.Grace+time.Minute)
	inWindow := acme.stored(t, "ORDERS", `{"id": "B"}`, "", 5*day)
	young := acme.stored(t, "ORDERS", `{"id": "C"}`, "", 2*time.Hour)
	atLongBoundary := long.stored(t, "LONG", `{"id": "A"}`, "", longKeep+retention.Grace-5*time.Minute)
	pastLong := long.stored(t, "SHORT", `{"id": "A"}`, "", longKeep+retention.Grace+5*time.Minute)

	// An idempotency key kept past its message's retention (one kept for a
	// type's window, say) keeps its message; an expired one goes with it.
	liveKey := acme.stored(t, "ORDERS", `{"id": "K1"}`, "key-live", 10*day)
	acme.exec(t, `UPDATE idempotency_keys SET expires_at = now() + interval '1 hour' WHERE key = 'key-live'`)
	expiredKey := acme.stored(t, "ORDERS", `{"id": "K2"}`, "key-expired", 10*day)
	acme.exec(t, `UPDATE idempotency_keys SET expires_at = now() - interval '1 hour' WHERE key = 'key-expired'`)

	// Deliveries: pending keeps its message; a live place keeps it; a
	// finished one goes with its attempts and expired lease.
	pending := acme.stored(t, "DELIV", `{"id": "D1"}`, "", 10*day)
	delivered := acme.stored(t, "DELIV", `{"id": "D2"}`, "", 10*day)
	leased := acme.stored(t, "DELIV", `{"id": "D3"}`, "", 10*day)
	acme.exec(t, `UPDATE deliveries SET status = 'delivered' WHERE message_id = $1`, delivered)
	acme.exec(t, `UPDATE deliveries SET status = 'failed' WHERE message_id = $1`, leased)
	acme.exec(t, `
		INSERT INTO delivery_attempts (delivery_id, attempt, started_at, duration_ms, response_status)
		SELECT id, 1, now() - interval '10 days', 5, 200 FROM deliveries WHERE message_id IN ($1, $2)`, delivered, leased)
	acme.exec(t, `
		UPDATE destination_places p SET delivery_id = d.id,
			expires_at = CASE d.message_id WHEN $1 THEN now() - interval '1 minute' ELSE now() + interval '1 minute' END
		FROM deliveries d
		WHERE d.message_id IN ($1, $2) AND p.destination_id = $3 AND p.place = CASE d.message_id WHEN $1 THEN 0 ELSE 1 END`,
		delivered, leased, destination)

	require.Equal(t, ingest.DuplicateFingerprint, acme.receive(t, "ORDERS", `{"id": "B", "n": 2}`, "").Outcome)
	acme.exec(t, `
		UPDATE blocked_copies SET released_message_id = $1, released_at = now(), released_by = 1, release_reason = 'test'
		WHERE original_message_id = $2`, oldOrder, inWindow)
	events := pgtest.Count(t, pool, `SELECT count(*) FROM audit_events WHERE message_id = $1`, oldOrder)
	require.Equal(t, 1, events)

	removed, err := sweeper(pool, 2, policy).Sweep(context.Background())
	require.NoError(t, err)

	for _, id := range []int64{oldOrder, pastLong, expiredKey, delivered} {
		require.False(t, exists(t, pool, "messages", id), "message %d is past its retention", id)
	}
	for _, id := range []int64{inWindow, young, atLongBoundary, liveKey, pending, leased} {
		require.True(t, exists(t, pool, "messages", id), "message %d is kept", id)
	}
	require.Equal(t, retention.Removed{retention.IdempotencyKeys: 1, retention.Messages: 4, retention.BlockedCopies: 2}, removed,
		"the expired key goes first; both copies named the old order, one as its original and one as its release")
	require.Zero(t, pgtest.Count(t, pool, `SELECT count(*) FROM blocked_copies`))
	require.Zero(t, pgtest.Count(t, pool, `SELECT count(*) FROM idempotency_keys WHERE key = 'key-expired'`))
	require.Equal(t, 1, pgtest.Count(t, pool, `SELECT count(*) FROM idempotency_keys WHERE key = 'key-live'`))
	require.Zero(t, pgtest.Count(t, pool, `SELECT count(*) FROM message_key_values WHERE message_id IN ($1, $2)`, oldOrder, delivered))
	require.Equal(t, 1, pgtest.Count(t, pool, `SELECT count(*) FROM message_key_values WHERE message_id = $1`, inWindow))
	require.Equal(t, 2, pgtest.Count(t, pool, `SELECT count(*) FROM deliveries`), "the pending and the leased one")
	require.Equal(t, 1, pgtest.Count(t, pool, `SELECT count(*) FROM delivery_attempts`), "the leased delivery's")
	require.Equal(t, 1, pgtest.Count(t, pool, `SELECT count(*) FROM destination_places WHERE expires_at > now()`), "the live place is held still")
	require.Equal(t, events, pgtest.Count(t, pool, `SELECT count(*) FROM audit_events WHERE message_id = $1`, oldOrder),
		"the audit trail outlives the message")

	// The outcome of each kind is kept for the admin.
	sweeps, err := db.On(pool).RetentionSweepList(context.Background())
	require.NoError(t, err)
	got := map[string]int64{}
	for _, s := range sweeps {
		require.Empty(t, s.Error)
		require.WithinDuration(t, time.Now(), s.FinishedAt, time.Minute)
		got[s.Kind] = s.Removed
	}
	require.Equal(t, map[string]int64{"idempotency_keys": 1, "messages": 4, "blocked_copies": 2}, got)
}

// A sweep decides nothing about duplicates: after it, every retransmission
// gets the answer it would have got without it. A message past
// RETENTION_MESSAGES but inside its window still blocks; one whose
// Idempotency-Key is alive still answers its retry; one past its window
// blocks nothing, swept or not.
func TestSweepLeavesDeduplicationDecisionsUnchanged(t *testing.T) {
	t.Parallel()
	pool := pgtest.Pool(t)
	acme := newSite(t, pool, "acme", map[string]int{"ORDERS": 0})
	inWindow := acme.stored(t, "ORDERS", `{"id": "A"}`, "", 5*day)
	pastWindow := acme.stored(t, "ORDERS", `{"id": "B"}`, "", 10*day)
	keyed := acme.stored(t, "ORDERS", `{"id": "K"}`, "key-1", 10*day)
	acme.exec(t, `UPDATE idempotency_keys SET expires_at = now() + interval '1 hour' WHERE key = 'key-1'`)

	removed, err := sweeper(pool, 100, policy).Sweep(context.Background())
	require.NoError(t, err)
	require.Equal(t, int64(1), removed[retention.Messages])
	require.False(t, exists(t, pool, "messages", pastWindow))

	dup := acme.receive(t, "ORDERS", `{"id": "A"}`, "")
	require.Equal(t, ingest.DuplicateFingerprint, dup.Outcome)
	require.Equal(t, inWindow, dup.MessageID)
	replay := acme.receive(t, "ORDERS", `{"id": "K"}`, "key-1")
	require.Equal(t, ingest.ReplayedKey, replay.Outcome)
	require.Equal(t, keyed, replay.MessageID)
	again := acme.receive(t, "ORDERS", `{"id": "B"}`, "")
	require.Equal(t, ingest.Created, again.Outcome, "past its window it would have been stored anyway")
	require.Equal(t, 1, pgtest.Count(t, pool, `SELECT count(*) FROM messages WHERE payload::text = '{"id": "A"}'`))
}

// Duplicates arriving while sweepers delete a large backlog beside them
// are all blocked against their originals, which are past
// RETENTION_MESSAGES but inside their window: the sweep deletes nothing
// still needed and lets no duplicate through.
func TestSweepWhileDuplicatesArrive(t *testing.T) {
	t.Parallel()
	pool := pgtest.Pool(t)
	acme := newSite(t, pool, "acme", map[string]int{"ORDERS": 0})
	const backlog, docs, senders, rounds = 3000, 20, 6, 5
	acme.exec(t, `
		INSERT INTO messages (tenant_id, environment_id, message_type_id, payload, content_hash, source_endpoint, received_at)
		SELECT $1, $2, $3, '{}', sha256(g::text::bytea), 'receive-message', now() - interval '30 days'
		FROM generate_series(1, $4) g`, acme.tenant.ID, acme.env.ID, acme.types["ORDERS"].ID, backlog)
	originals := map[string]int64{}
	for i := range docs {
		doc := fmt.Sprintf("DOC-%d", i)
		originals[doc] = acme.stored(t, "ORDERS", fmt.Sprintf(`{"id": %q}`, doc), "", 3*day)
	}

	ctx, cancel := context.WithCancel(context.Background())
	var sweepers sync.WaitGroup
	for range 2 { // two replicas
		sweepers.Add(1)
		go func() {
			defer sweepers.Done()
			sweeper(pool, 50, policy).Run(ctx)
		}()
	}
	var wg sync.WaitGroup
	errs := make(chan error, senders*rounds*docs)
	for s := range senders {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for r := range rounds {
				for doc, original := range originals {
					// Every other copy has changed content, so that blocked
					// copies are written beside the sweep too.
					res, err := acme.in.Receive(ctx, ingest.Request{
						TenantID: acme.tenant.ID, EnvironmentID: acme.env.ID, MessageType: messagetype.Prepare(acme.types["ORDERS"]),
						Payload: fmt.Appendf(nil, `{"id": %q, "n": %d}`, doc, (s+r)%2),
						Source:  ingest.Source{Endpoint: ingest.EndpointReceiveMessage, RemoteAddr: "192.0.2.1", Actor: "test"},
					})
					switch {
					case err != nil:
						errs <- err
					case res.Outcome != ingest.DuplicateFingerprint || res.MessageID != original:
						errs <- fmt.Errorf("%s: %s %d, want a duplicate of %d", doc, res.Outcome, res.MessageID, original)
					}
				}
			}
		}()
	}
	wg.Wait()
	require.Eventually(t, func() bool {
		return pgtest.Count(t, pool, `SELECT count(*) FROM messages WHERE received_at < now() - interval '29 days'`) == 0
	}, 30*time.Second, 20*time.Millisecond, "the backlog is swept")
	cancel()
	sweepers.Wait()
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}
	require.Equal(t, docs, pgtest.Count(t, pool, `SELECT count(*) FROM messages`), "the originals, and nothing else")
	for _, id := range originals {
		require.True(t, exists(t, pool, "messages", id))
	}
	require.Equal(t, docs, pgtest.Count(t, pool, `SELECT count(DISTINCT original_message_id) FROM blocked_copies`))
}

// Blocked copies and delivery attempts expire by their own periods, and
// what they belong to stays.
func TestSweepExpiresBlockedCopiesAndDeliveryAttempts(t *testing.T) {
	t.Parallel()
	pool := pgtest.Pool(t)
	acme := newSite(t, pool, "acme", map[string]int{"ORDERS": 0})
	testfactory.Destination(t, pool, testfactory.DestinationOpts{Tenant: "acme", URL: "http://127.0.0.1:9/"})
	original := acme.stored(t, "ORDERS", `{"id": "A"}`, "", time.Hour)
	for n := range 3 {
		require.Equal(t, ingest.DuplicateFingerprint, acme.receive(t, "ORDERS", fmt.Sprintf(`{"id": "A", "n": %d}`, n), "").Outcome)
	}
	acme.ageCopies(t, `c.payload::text <> '{"id": "A", "n": 0}'`, 91*day)
	acme.exec(t, `UPDATE deliveries SET status = 'delivered'`)
	acme.exec(t, `
		INSERT INTO delivery_attempts (delivery_id, attempt, started_at, duration_ms)
		SELECT id, a, now() - make_interval(days => 10 * a), 5 FROM deliveries, generate_series(1, 4) a`)

	p := policy
	p.Periods.BlockedCopies, p.Periods.DeliveryAttempts = 90*day, 30*day
	removed, err := sweeper(pool, 1, p).Sweep(context.Background())
	require.NoError(t, err)
	require.Equal(t, retention.Removed{retention.IdempotencyKeys: 0, retention.Messages: 0,
		retention.BlockedCopies: 2, retention.DeliveryAttempts: 2}, removed)
	require.Equal(t, []string{`{"id": "A", "n": 0}`}, pgtest.Column[string](t, pool, `SELECT payload::text FROM blocked_copies`))
	require.Equal(t, []int32{1, 2}, pgtest.Column[int32](t, pool, `SELECT attempt FROM delivery_attempts ORDER BY attempt`),
		"the attempts 10 and 20 days old")
	require.True(t, exists(t, pool, "messages", original))
	require.Equal(t, 1, pgtest.Count(t, pool, `SELECT count(*) FROM deliveries`))
	require.Equal(t, 3, pgtest.Count(t, pool, `SELECT count(*) FROM audit_events WHERE action = 'message.duplicate_blocked'`), "blocked copies' events stay: the audit has its own period")
}
