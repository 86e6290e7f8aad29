package ingest_test

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"

	"github.com/lefia/edihub/internal/apperr"
	"github.com/lefia/edihub/internal/db"
	"github.com/lefia/edihub/internal/delivery"
	"github.com/lefia/edihub/internal/ingest"
	"github.com/lefia/edihub/internal/messagetype"
	"github.com/lefia/edihub/internal/pgtest"
	"github.com/lefia/edihub/internal/testfactory"
)

// groupSite is a tenant with an order type keyed by the order id, a
// second type whose row a test can lock to hold a transaction up, and an
// ingest service with one group lane, so that the requests a test sends
// while that lane is held form the next group together.
type groupSite struct {
	pool          *pgxpool.Pool
	in            *ingest.Service
	tenant, env   int64
	orders, gated db.MessageType

	leaders atomic.Int64

	mu     sync.Mutex
	groups []observedGroup
}

type observedGroup struct {
	size   int
	failed bool
}

// newGroupSite returns the site; wrap, when given, stands between the
// service and the deliveries it writes.
func newGroupSite(t *testing.T, wrap ...func(ingest.Deliveries) ingest.Deliveries) *groupSite {
	t.Helper()
	pool := pgtest.Pool(t)
	var deliveries ingest.Deliveries = delivery.NewService(pool, 3)
	for _, w := range wrap {
		deliveries = w(deliveries)
	}
	tenant, env := testfactory.TenantWithEnvironment(t, pool, "acme")
	s := &groupSite{pool: pool, tenant: tenant.ID, env: env.ID,
		orders: testfactory.MessageType(t, pool, &testfactory.MessageTypeOpts{Fields: []string{"id"}}),
		gated:  testfactory.MessageType(t, pool, &testfactory.MessageTypeOpts{Code: "GATED", Fields: []string{"id"}}),
	}
	s.in = ingest.New(pool, time.Hour, deliveries, ingest.WithGroupLanes(1),
		ingest.WithGroupObserver(func(size int, failed bool) {
			s.mu.Lock()
			defer s.mu.Unlock()
			s.groups = append(s.groups, observedGroup{size, failed})
		}))
	return s
}

// leader is a new message of the gated type, each one another, so that it
// is stored and not taken for a retransmission of the one before.
func (s *groupSite) leader() ingest.Request {
	return s.req(s.gated, fmt.Sprintf(`{"id": "leader-%d"}`, s.leaders.Add(1)))
}

func (s *groupSite) req(mt db.MessageType, payload string) ingest.Request {
	return ingest.Request{
		TenantID: s.tenant, EnvironmentID: s.env, MessageType: messagetype.Prepare(mt), Payload: []byte(payload),
		Source: ingest.Source{Endpoint: ingest.EndpointReceiveMessage, RemoteAddr: "192.0.2.1", Actor: "test"},
	}
}

// answer is what Receive returned.
type answer struct {
	res ingest.Result
	err error
}

func (s *groupSite) send(ctx context.Context, req ingest.Request) <-chan answer {
	done := make(chan answer, 1)
	go func() {
		res, err := s.in.Receive(ctx, req)
		done <- answer{res, err}
	}()
	return done
}

// hold locks message type mt's row until the returned function is called:
// a transaction storing a message of that type waits for it at its
// foreign key check, holding its lane.
func (s *groupSite) hold(t *testing.T, mt db.MessageType) (release func()) {
	t.Helper()
	tx, err := s.pool.Begin(context.Background())
	require.NoError(t, err)
	_, err = tx.Exec(context.Background(), `SELECT FROM message_types WHERE id = $1 FOR UPDATE`, mt.ID)
	require.NoError(t, err)
	var once sync.Once
	release = func() { once.Do(func() { require.NoError(t, tx.Rollback(context.Background())) }) }
	t.Cleanup(release)
	return release
}

// waitForLockWaits waits until n statements of this database wait for a lock.
func (s *groupSite) waitForLockWaits(t *testing.T, n int) {
	t.Helper()
	require.Eventually(t, func() bool {
		return pgtest.Count(t, s.pool, `SELECT count(*) FROM pg_stat_activity
			WHERE datname = current_database() AND wait_event_type = 'Lock'`) >= n
	}, 10*time.Second, 5*time.Millisecond)
}

// group sends reqs while the only lane of messages to store is held by a
// new message of the gated type and the lanes of replays and
// retransmissions are held too, lets the lanes go once all of them wait,
// and returns their answers in the order of reqs; those of each kind
// (committers) are then decided as one group.
func (s *groupSite) group(t *testing.T, reqs []ingest.Request) []answer {
	t.Helper()
	release := s.hold(t, s.gated)
	leader := s.send(context.Background(), s.leader())
	releaseQuick := ingest.HoldQuickLanes(s.in)
	pending := s.queue(t, reqs)
	releaseQuick()
	release()
	require.NoError(t, (<-leader).err)
	answers := make([]answer, len(reqs))
	for i, p := range pending {
		answers[i] = <-p
	}
	return answers
}

// queue sends reqs, once the lane's transaction waits for a lock, each
// once the one before it waits for the next group, and returns when all of
// them wait. They arrive in their order, as requests one after the other
// do: sent at once, a copy could be read before the message it repeats,
// and be taken for new rather than for a retransmission. ctxs, when given,
// are the requests' contexts.
func (s *groupSite) queue(t *testing.T, reqs []ingest.Request, ctxs ...context.Context) []<-chan answer {
	t.Helper()
	s.waitForLockWaits(t, 1)
	pending := make([]<-chan answer, len(reqs))
	for i, req := range reqs {
		ctx := context.Background()
		if i < len(ctxs) {
			ctx = ctxs[i]
		}
		pending[i] = s.send(ctx, req)
		require.Eventually(t, func() bool { return ingest.Waiting(s.in) == i+1 }, 10*time.Second, time.Millisecond)
	}
	return pending
}

func (s *groupSite) observed() []observedGroup {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]observedGroup(nil), s.groups...)
}

func (s *groupSite) count(t *testing.T, query string, args ...any) int {
	t.Helper()
	return pgtest.Count(t, s.pool, query, args...)
}

// refuseAtCommit makes the commit of any transaction fail that inserted
// into table a row for which condition holds: a deferred constraint
// trigger checks it then.
func (s *groupSite) refuseAtCommit(t *testing.T, table, condition string) {
	t.Helper()
	_, err := s.pool.Exec(context.Background(), fmt.Sprintf(`
		CREATE FUNCTION refuse_poison() RETURNS trigger LANGUAGE plpgsql AS $$
		BEGIN
			IF %s THEN RAISE EXCEPTION 'poisoned'; END IF;
			RETURN NULL;
		END $$;
		CREATE CONSTRAINT TRIGGER refuse_poison AFTER INSERT ON %s
			DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION refuse_poison();`, condition, table))
	require.NoError(t, err)
}

// When the shared transaction fails, no member is answered with its
// failure: each is decided again alone, so the one bad member fails by
// itself and every other one is stored, once.
func TestGroupCommitIsolatesAFailingMember(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		// bad returns a request that fails in any transaction.
		bad func(t *testing.T, s *groupSite) ingest.Request
	}{
		{"its statement fails: its tenant has no such message type", func(t *testing.T, s *groupSite) ingest.Request {
			// As if the type had been deleted since the request read it
			// (audit events keep a type from being deleted in a test): the
			// message's foreign key to its tenant's types fails.
			testfactory.Tenant(t, s.pool, &testfactory.TenantOpts{Slug: "elsewhere"})
			foreign := testfactory.MessageType(t, s.pool, &testfactory.MessageTypeOpts{Tenant: "elsewhere", Fields: []string{"id"}})
			return s.req(foreign, `{"id": "bad"}`)
		}},
		{"the commit fails: a deferred constraint refuses it", func(t *testing.T, s *groupSite) ingest.Request {
			s.refuseAtCommit(t, "messages", "NEW.payload->>'id' = 'poison'")
			return s.req(s.orders, `{"id": "poison"}`)
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			s := newGroupSite(t)
			const good = 20
			var reqs []ingest.Request
			for i := range good {
				reqs = append(reqs, s.req(s.orders, fmt.Sprintf(`{"id": "order-%d"}`, i)))
			}
			bad := good / 2
			reqs = append(reqs[:bad], append([]ingest.Request{tc.bad(t, s)}, reqs[bad:]...)...)

			answers := s.group(t, reqs)
			require.Contains(t, s.observed(), observedGroup{size: good + 1, failed: true}, "the members shared a transaction, which failed")
			for i, a := range answers {
				if i == bad {
					require.Error(t, a.err, "the bad member fails")
					continue
				}
				require.NoError(t, a.err, "member %d", i)
				require.Equal(t, ingest.Created, a.res.Outcome, "member %d", i)
			}
			require.Equal(t, good, s.count(t, `SELECT count(*) FROM messages WHERE message_type_id = $1`, s.orders.ID))
			require.Equal(t, good, s.count(t, `SELECT count(DISTINCT payload->>'id') FROM messages WHERE message_type_id = $1`, s.orders.ID))
			require.Zero(t, s.count(t, `SELECT count(*) FROM messages WHERE payload->>'id' IN ('bad', 'poison')`))
			require.Zero(t, s.count(t, `SELECT count(*) FROM audit_events WHERE action = 'message.duplicate_blocked'`))
		})
	}
}

// Two copies in one group are one stored message and one blocked duplicate
// with its audit event, as one after the other would be; the same order in
// another tenant, in the same group, is that tenant's own new message. The
// same bytes sent again meanwhile are a retransmission, decided in a group
// of their own kind, and blocked as well.
func TestGroupCommitDecidesCopiesAndTenantsAsAlone(t *testing.T) {
	t.Parallel()
	s := newGroupSite(t)
	other, otherEnv := testfactory.TenantWithEnvironment(t, s.pool, "globex")
	otherOrders := testfactory.MessageType(t, s.pool, &testfactory.MessageTypeOpts{Tenant: other.Slug, Fields: []string{"id"}})
	otherReq := s.req(otherOrders, `{"id": "A"}`)
	otherReq.TenantID, otherReq.EnvironmentID = other.ID, otherEnv.ID

	answers := s.group(t, []ingest.Request{
		s.req(s.orders, `{"id": "A"}`), s.req(s.orders, `{"id": "B"}`), otherReq,
		s.req(s.orders, `{"id": "A", "note": "changed"}`), s.req(s.orders, `{"id": "A"}`),
	})
	require.Contains(t, s.observed(), observedGroup{size: 4}, "the new messages shared a transaction")
	for _, a := range answers {
		require.NoError(t, a.err)
	}
	// Which of the two groups commits first the test does not fix: one of
	// the three copies of A is stored and names the other two.
	created, blocked := 0, 0
	var holder int64
	for _, i := range []int{0, 3, 4} {
		switch answers[i].res.Outcome {
		case ingest.Created:
			created++
			holder = answers[i].res.MessageID
		case ingest.DuplicateFingerprint:
			blocked++
		}
	}
	require.Equal(t, 1, created)
	require.Equal(t, 2, blocked)
	for _, i := range []int{0, 3, 4} {
		require.Equal(t, holder, answers[i].res.MessageID)
	}
	require.Equal(t, ingest.Created, answers[1].res.Outcome)
	require.Equal(t, ingest.Created, answers[2].res.Outcome, "the other tenant's A is its own")
	require.NotEqual(t, holder, answers[2].res.MessageID)

	require.Equal(t, 2, s.count(t, `SELECT count(*) FROM messages WHERE tenant_id = $1 AND message_type_id = $2`, s.tenant, s.orders.ID))
	require.Equal(t, 1, s.count(t, `SELECT count(*) FROM messages WHERE tenant_id = $1 AND id = $2`, other.ID, answers[2].res.MessageID))
	require.Equal(t, 1, s.count(t, `SELECT count(*) FROM messages WHERE tenant_id = $1`, other.ID))
	require.Equal(t, 2, s.count(t, `SELECT count(*) FROM audit_events
		WHERE action = 'message.duplicate_blocked' AND tenant_id = $1 AND message_id = $2`, s.tenant, holder))
	require.Zero(t, s.count(t, `SELECT count(*) FROM audit_events WHERE action = 'message.duplicate_blocked' AND tenant_id = $1`, other.ID))
}

// A member whose client left before its group started is left out; one
// whose client leaves while its group commits cancels nothing: the others,
// and its own message, are stored.
func TestGroupCommitOutlivesItsMembersClients(t *testing.T) {
	t.Parallel()
	s := newGroupSite(t)
	// The group's first member is of a type of its own, whose row the test
	// locks so that the group's transaction waits until that member's
	// client has left.
	held := testfactory.MessageType(t, s.pool, &testfactory.MessageTypeOpts{Code: "HELD", Fields: []string{"id"}})
	reqs := []ingest.Request{s.req(held, `{"id": "leaves during"}`), s.req(s.orders, `{"id": "left before"}`)}
	for i := range 10 {
		reqs = append(reqs, s.req(s.orders, fmt.Sprintf(`{"id": "order-%d"}`, i)))
	}
	leaving, leaveDuring := context.WithCancel(context.Background())
	defer leaveDuring()
	left, leaveBefore := context.WithCancel(context.Background())
	defer leaveBefore()

	release := s.hold(t, s.gated)
	gate := s.hold(t, held)
	leader := s.send(context.Background(), s.leader())
	pending := s.queue(t, reqs, leaving, left)
	leaveBefore()
	release()
	require.NoError(t, (<-leader).err)
	s.waitForLockWaits(t, 1) // the group, at the held type's row
	leaveDuring()
	time.Sleep(50 * time.Millisecond) // a group on the member's context would be cancelled by now
	gate()

	first := <-pending[0]
	require.NoError(t, first.err, "the member whose client left during the commit was stored all the same")
	require.Equal(t, ingest.Created, first.res.Outcome)
	require.ErrorIs(t, (<-pending[1]).err, context.Canceled)
	for i, p := range pending[2:] {
		a := <-p
		require.NoError(t, a.err, "member %d", i+2)
		require.Equal(t, ingest.Created, a.res.Outcome)
	}
	require.Contains(t, s.observed(), observedGroup{size: len(reqs) - 1})
	require.Zero(t, s.count(t, `SELECT count(*) FROM messages WHERE payload->>'id' = 'left before'`))
	require.Equal(t, len(reqs), s.count(t, `SELECT count(*) FROM messages`), "the leader and every member but the one that left before")
}

// panicOnce queues deliveries, except that the first time it is asked for
// several messages' at once (a group's) it panics, as a bug would.
type panicOnce struct {
	ingest.Deliveries
	panicked atomic.Bool
}

func (p *panicOnce) QueueWrittenTx(ctx context.Context, tx pgx.Tx, written []db.DeliveryCreateForStoredRow) (int, error) {
	if len(written) > 1 && p.panicked.CompareAndSwap(false, true) {
		panic("a bug while queueing deliveries")
	}
	return p.Deliveries.QueueWrittenTx(ctx, tx, written)
}

// A panic while a group commits fails that group like any other failure:
// it is rolled back, its members are decided alone and stored, and the lane
// goes on forming groups. The group runs on a goroutine of its own, so
// without that the panic would end the process.
func TestGroupCommitSurvivesAPanic(t *testing.T) {
	t.Parallel()
	s := newGroupSite(t, func(d ingest.Deliveries) ingest.Deliveries { return &panicOnce{Deliveries: d} })
	testfactory.Destination(t, s.pool, testfactory.DestinationOpts{URL: "http://127.0.0.1:9/orders"})
	orders := func(from int) []ingest.Request {
		var reqs []ingest.Request
		for i := from; i < from+10; i++ {
			reqs = append(reqs, s.req(s.orders, fmt.Sprintf(`{"id": "order-%d"}`, i)))
		}
		return reqs
	}
	for round, failed := range []bool{true, false} {
		for i, a := range s.group(t, orders(10*round)) {
			require.NoError(t, a.err, "round %d, member %d", round, i)
			require.Equal(t, ingest.Created, a.res.Outcome, "round %d, member %d", round, i)
		}
		require.Contains(t, s.observed(), observedGroup{size: 10, failed: failed})
	}
	require.Equal(t, 20, s.count(t, `SELECT count(*) FROM messages WHERE message_type_id = $1`, s.orders.ID))
	require.Equal(t, 20, s.count(t, `SELECT count(DISTINCT payload->>'id') FROM messages WHERE message_type_id = $1`, s.orders.ID))
	messages := s.count(t, `SELECT count(*) FROM messages`) // the orders and the message that held the lane
	require.Equal(t, messages, s.count(t, `SELECT count(*) FROM deliveries`), "one delivery for each message")
	require.Equal(t, messages, s.count(t, `SELECT count(*) FROM deliveries d JOIN river_job j ON (j.args->>'delivery_id')::bigint = d.id`),
		"each with one job")
}

// receiveAtOnce has in receive every one of reqs at the same moment,
// requires that none fails, and counts their outcomes.
func receiveAtOnce(t *testing.T, in *ingest.Service, reqs []ingest.Request) map[ingest.Outcome]int {
	t.Helper()
	var wg sync.WaitGroup
	start := make(chan struct{})
	outcomes := make(chan ingest.Outcome, len(reqs))
	errs := make(chan error, len(reqs))
	for _, req := range reqs {
		wg.Go(func() {
			<-start
			res, err := in.Receive(context.Background(), req)
			errs <- err
			outcomes <- res.Outcome
		})
	}
	close(start)
	wg.Wait()
	close(errs)
	close(outcomes)
	for err := range errs {
		require.NoError(t, err)
	}
	n := map[ingest.Outcome]int{}
	for o := range outcomes {
		n[o]++
	}
	return n
}

// Many single messages at once, half of them copies of one order, through
// several lanes and with group commit off: each order is stored exactly
// once, every copy is blocked with its audit event, and nothing waits for
// ever on another group.
func TestGroupCommitUnderConcurrency(t *testing.T) {
	t.Parallel()
	withLanes(t, func(t *testing.T, pool *pgxpool.Pool, in *ingest.Service, order func(id, key string) ingest.Request) {
		const distinct, copies = 100, 100
		var reqs []ingest.Request
		for i := range distinct + copies {
			id := fmt.Sprintf("order-%d", i)
			if i >= distinct {
				id = "the copied order"
			}
			reqs = append(reqs, order(id, ""))
		}
		n := receiveAtOnce(t, in, reqs)
		require.Equal(t, map[ingest.Outcome]int{ingest.Created: distinct + 1, ingest.DuplicateFingerprint: copies - 1}, n)
		require.Equal(t, distinct+1, pgtest.Count(t, pool, `SELECT count(*) FROM messages`))
		require.Equal(t, distinct+1, pgtest.Count(t, pool, `SELECT count(DISTINCT fingerprint) FROM messages`))
		require.Equal(t, copies-1, pgtest.Count(t, pool, `SELECT count(*) FROM audit_events
			WHERE action = 'message.duplicate_blocked' AND message_id = (SELECT id FROM messages WHERE payload->>'id' = 'the copied order')`))
	})
}

// withLanes runs test, in parallel, with group commit off (0 lanes) and
// with 1, 2 and 4 lanes, each on a database of its own with a tenant and
// an order type keyed by the order's id; order makes a request for the
// order id, with the Idempotency-Key key unless that is "".
func withLanes(t *testing.T, test func(t *testing.T, pool *pgxpool.Pool, in *ingest.Service, order func(id, key string) ingest.Request)) {
	for _, lanes := range []int{0, 1, 2, 4} {
		t.Run(fmt.Sprintf("lanes=%d", lanes), func(t *testing.T) {
			t.Parallel()
			pool := pgtest.Pool(t)
			tenant, env := testfactory.TenantWithEnvironment(t, pool, "acme")
			mt := testfactory.MessageType(t, pool, &testfactory.MessageTypeOpts{Fields: []string{"id"}})
			in := ingest.New(pool, time.Hour, delivery.NewService(pool, 3), ingest.WithGroupLanes(lanes))
			test(t, pool, in, func(id, key string) ingest.Request {
				return ingest.Request{
					TenantID: tenant.ID, EnvironmentID: env.ID, MessageType: messagetype.Prepare(mt),
					Payload: fmt.Appendf(nil, `{"id": %q}`, id), IdempotencyKey: key,
					Source: ingest.Source{Endpoint: ingest.EndpointReceiveMessage, RemoteAddr: "192.0.2.1", Actor: "test"},
				}
			})
		})
	}
}

// keyed is s.req sent with an Idempotency-Key.
func (s *groupSite) keyed(payload, key string) ingest.Request {
	req := s.req(s.orders, payload)
	req.IdempotencyKey = key
	return req
}

// blockedBy counts the duplicate_blocked events recorded against the
// message with id.
func (s *groupSite) blockedBy(t *testing.T, id int64) int {
	t.Helper()
	return s.count(t, `SELECT count(*) FROM audit_events WHERE action = 'message.duplicate_blocked' AND message_id = $1`, id)
}

// Replays of Idempotency-Keys share a group with each other, beside the
// groups of messages decided by fingerprint: each replay is answered as alone, with
// the first answer and one audit event like a lone replay's; a key reused
// for other content is refused; a key not taken yet is claimed by its
// request alone, after the group, and stored once.
func TestGroupCommitReplaysKeys(t *testing.T) {
	t.Parallel()
	s := newGroupSite(t)
	first := map[string]ingest.Result{}
	for _, key := range []string{"key-a", "key-b", "key-c"} {
		res, err := s.in.Receive(context.Background(), s.keyed(fmt.Sprintf(`{"id": %q}`, key), key))
		require.NoError(t, err)
		require.Equal(t, ingest.Created, res.Outcome)
		first[key] = res
	}
	stored, err := s.in.Receive(context.Background(), s.req(s.orders, `{"id": "by fingerprint"}`))
	require.NoError(t, err)
	// A replay alone, whose audit event the grouped ones must match.
	alone, err := s.in.Receive(context.Background(), s.keyed(`{"id": "key-a"}`, "key-a"))
	require.NoError(t, err)
	require.Equal(t, ingest.ReplayedKey, alone.Outcome)

	reqs := []ingest.Request{
		s.keyed(`{"id": "key-a"}`, "key-a"), s.req(s.orders, `{"id": "new by fingerprint"}`),
		s.keyed(`{"id": "key-b"}`, "key-b"), s.keyed(`{"id": "key-a"}`, "key-a"),
		s.keyed(`{"id": "key-b", "note": "other content"}`, "key-b"), s.req(s.orders, `{"id": "by fingerprint"}`),
		s.keyed(`{"id": "key-new"}`, "key-new"), s.keyed(`{"id": "key-c"}`, "key-c"), s.keyed(`{"id": "key-a"}`, "key-a"),
	}
	answers := s.group(t, reqs)
	require.Contains(t, s.observed(), observedGroup{size: 7}, "the keyed requests shared a transaction")
	for _, i := range []int{0, 2, 3, 7, 8} {
		a, key := answers[i], reqs[i].IdempotencyKey
		require.NoError(t, a.err, "member %d", i)
		require.Equal(t, ingest.ReplayedKey, a.res.Outcome, "member %d", i)
		require.Equal(t, first[key].MessageID, a.res.MessageID, "member %d", i)
		require.JSONEq(t, string(first[key].Body), string(a.res.Body), "member %d", i)
	}
	require.NoError(t, answers[1].err)
	require.Equal(t, ingest.Created, answers[1].res.Outcome)
	ae, ok := apperr.As(answers[4].err)
	require.True(t, ok, "the reused key is refused: %v", answers[4].err)
	require.Equal(t, "idempotency-key-reused", ae.Type)
	require.NoError(t, answers[5].err)
	require.Equal(t, ingest.DuplicateFingerprint, answers[5].res.Outcome)
	require.Equal(t, stored.MessageID, answers[5].res.MessageID)
	require.NoError(t, answers[6].err)
	require.Equal(t, ingest.Created, answers[6].res.Outcome, "a key not taken is claimed after the group")

	require.Equal(t, 1+3+1+1+1, s.count(t, `SELECT count(*) FROM messages`), "the leader, three keys, two by fingerprint and the new key")
	require.Equal(t, 1, s.count(t, `SELECT count(*) FROM messages WHERE idempotency_key = 'key-new'`))
	require.Equal(t, 1+3, s.blockedBy(t, first["key-a"].MessageID), "the lone replay and three in the group")
	require.Equal(t, 1, s.blockedBy(t, first["key-b"].MessageID), "the reused key records nothing")
	require.Equal(t, 1, s.blockedBy(t, first["key-c"].MessageID))
	require.Equal(t, 1, s.blockedBy(t, stored.MessageID))
	require.Equal(t, 1+3+1+1+1, s.count(t, `SELECT count(*) FROM audit_events WHERE action = 'message.duplicate_blocked'`))
	require.Equal(t, 1, s.count(t, `SELECT count(DISTINCT (tenant_id, environment_id, message_type_id, actor, match_key, details))
		FROM audit_events WHERE action = 'message.duplicate_blocked' AND message_id = $1`, first["key-a"].MessageID),
		"a replay in a group records what a lone one does")

	// A group of keyed requests alone is answered the same way.
	reqs = []ingest.Request{
		s.keyed(`{"id": "key-c"}`, "key-c"), s.keyed(`{"id": "key-other"}`, "key-other"),
		s.keyed(`{"id": "key-a", "note": "other content"}`, "key-a"), s.keyed(`{"id": "key-b"}`, "key-b"),
	}
	answers = s.group(t, reqs)
	require.Contains(t, s.observed(), observedGroup{size: len(reqs)})
	for _, i := range []int{0, 3} {
		require.NoError(t, answers[i].err)
		require.Equal(t, ingest.ReplayedKey, answers[i].res.Outcome)
		require.JSONEq(t, string(first[reqs[i].IdempotencyKey].Body), string(answers[i].res.Body))
	}
	require.NoError(t, answers[1].err)
	require.Equal(t, ingest.Created, answers[1].res.Outcome)
	ae, ok = apperr.As(answers[2].err)
	require.True(t, ok, "the reused key is refused: %v", answers[2].err)
	require.Equal(t, "idempotency-key-reused", ae.Type)
	require.Equal(t, 2, s.blockedBy(t, first["key-c"].MessageID))
	require.Equal(t, 2, s.blockedBy(t, first["key-b"].MessageID))
	require.Equal(t, 4, s.blockedBy(t, first["key-a"].MessageID))
	require.Equal(t, 2+3+2+1+1, s.count(t, `SELECT count(*) FROM messages`),
		"two leaders, three keys, two by fingerprint, the new key and key-other")
}

// When a group with replays fails, its audit events roll back with it and
// every member is decided alone: each replay is recorded exactly once, and
// only the bad member fails.
func TestGroupCommitFailingGroupReplaysAlone(t *testing.T) {
	t.Parallel()
	refuseReplay := func(t *testing.T, s *groupSite) ingest.Request {
		s.refuseAtCommit(t, "audit_events", "NEW.actor = 'poison'")
		req := s.keyed(`{"id": "key-1"}`, "key-1")
		req.Source.Actor = "poison"
		return req
	}
	for _, tc := range []struct {
		name string
		// refuse creates a deferred trigger that fails any transaction in
		// which the bad request writes, and returns that request.
		refuse func(t *testing.T, s *groupSite) ingest.Request
		// replaysOnly leaves the messages by fingerprint out of the group.
		replaysOnly bool
	}{
		{"a message by fingerprint fails the commit", func(t *testing.T, s *groupSite) ingest.Request {
			s.refuseAtCommit(t, "messages", "NEW.payload->>'id' = 'poison'")
			return s.req(s.orders, `{"id": "poison"}`)
		}, false},
		{"a replay's audit event fails the commit", refuseReplay, false},
		{"a replay's audit event fails the commit of a group of replays", refuseReplay, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			s := newGroupSite(t)
			const keys = 4
			originals := make([]int64, keys)
			for i := range keys {
				key := fmt.Sprintf("key-%d", i)
				res, err := s.in.Receive(context.Background(), s.keyed(fmt.Sprintf(`{"id": %q}`, key), key))
				require.NoError(t, err)
				originals[i] = res.MessageID
			}
			bad := tc.refuse(t, s)
			var reqs []ingest.Request
			for i := range keys {
				key := fmt.Sprintf("key-%d", i)
				reqs = append(reqs, s.keyed(fmt.Sprintf(`{"id": %q}`, key), key))
				if !tc.replaysOnly {
					reqs = append(reqs, s.req(s.orders, fmt.Sprintf(`{"id": "order-%d"}`, i)))
				}
			}
			reqs = append(reqs, s.keyed(`{"id": "key-new"}`, "key-new"), bad)

			answers := s.group(t, reqs)
			kind := 0 // the members of the bad one's kind, which share its group
			for _, req := range reqs {
				if (req.IdempotencyKey == "") == (bad.IdempotencyKey == "") {
					kind++
				}
			}
			require.Contains(t, s.observed(), observedGroup{size: kind, failed: true}, "the members of its kind shared a transaction, which failed")
			require.Error(t, answers[len(reqs)-1].err, "the bad member fails")
			for i, a := range answers[:len(reqs)-1] {
				require.NoError(t, a.err, "member %d", i)
				want := ingest.Created
				if key := reqs[i].IdempotencyKey; key != "key-new" && key != "" {
					want = ingest.ReplayedKey
					require.Equal(t, originals[key[len("key-")]-'0'], a.res.MessageID)
				}
				require.Equal(t, want, a.res.Outcome, "member %d", i)
			}
			for i, id := range originals {
				require.Equal(t, 1, s.blockedBy(t, id), "key-%d: its replay is recorded once (and a bad one not at all)", i)
			}
			require.Equal(t, keys, s.count(t, `SELECT count(*) FROM audit_events WHERE action = 'message.duplicate_blocked'`))
			orders := keys
			if tc.replaysOnly {
				orders = 0
			}
			require.Equal(t, 1+keys+orders+1, s.count(t, `SELECT count(*) FROM messages`), "the leader, the keys' originals, the orders and the new key")
			require.Equal(t, 1, s.count(t, `SELECT count(*) FROM messages WHERE idempotency_key = 'key-new'`))
		})
	}
}

// Many requests at once, through several lanes and with group commit off:
// 32 first uses of one Idempotency-Key, first uses of other keys and
// messages by fingerprint with copies, and then the same again, now all
// replays and duplicates. The key's message is stored once and every other
// use replays it, each key's replays are recorded once each, and nothing
// is stored twice.
func TestGroupCommitKeysUnderConcurrency(t *testing.T) {
	t.Parallel()
	withLanes(t, func(t *testing.T, pool *pgxpool.Pool, in *ingest.Service, order func(id, key string) ingest.Request) {
		const sameKey, otherKeys, distinct, copies = 32, 20, 20, 20
		var reqs []ingest.Request
		add := func(n int, id func(i int) string, key func(i int) string) {
			for i := range n {
				reqs = append(reqs, order(id(i), key(i)))
			}
		}
		add(sameKey, func(int) string { return "the keyed order" }, func(int) string { return "the key" })
		add(otherKeys, func(i int) string { return fmt.Sprintf("keyed-%d", i) }, func(i int) string { return fmt.Sprintf("key-%d", i) })
		add(distinct, func(i int) string { return fmt.Sprintf("order-%d", i) }, func(int) string { return "" })
		add(copies, func(int) string { return "the copied order" }, func(int) string { return "" })

		blocked := func(where string) int {
			return pgtest.Count(t, pool, `SELECT count(*) FROM audit_events
					WHERE action = 'message.duplicate_blocked' AND message_id IN (SELECT id FROM messages WHERE `+where+`)`)
		}
		stored := 1 + otherKeys + distinct + 1

		require.Equal(t, map[ingest.Outcome]int{
			ingest.Created: stored, ingest.ReplayedKey: sameKey - 1, ingest.DuplicateFingerprint: copies - 1,
		}, receiveAtOnce(t, in, reqs))
		require.Equal(t, stored, pgtest.Count(t, pool, `SELECT count(*) FROM messages`))
		require.Equal(t, 1, pgtest.Count(t, pool, `SELECT count(*) FROM messages WHERE idempotency_key = 'the key'`))
		require.Equal(t, sameKey-1, blocked(`idempotency_key = 'the key'`))
		require.Zero(t, blocked(`idempotency_key LIKE 'key-%'`))
		require.Equal(t, copies-1, blocked(`payload->>'id' = 'the copied order'`))

		require.Equal(t, map[ingest.Outcome]int{
			ingest.ReplayedKey: sameKey + otherKeys, ingest.DuplicateFingerprint: distinct + copies,
		}, receiveAtOnce(t, in, reqs))
		require.Equal(t, stored, pgtest.Count(t, pool, `SELECT count(*) FROM messages`), "nothing more is stored")
		require.Equal(t, 2*sameKey-1, blocked(`idempotency_key = 'the key'`))
		require.Equal(t, otherKeys, blocked(`idempotency_key LIKE 'key-%'`))
		require.Equal(t, otherKeys, pgtest.Count(t, pool, `SELECT count(DISTINCT message_id) FROM audit_events
				WHERE action = 'message.duplicate_blocked' AND match_key LIKE 'key-%'`), "one replay of each key")
		require.Equal(t, 2*copies-1, blocked(`payload->>'id' = 'the copied order'`))
		require.Equal(t, distinct, blocked(`payload->>'id' LIKE 'order-%'`))
	})
}

// New messages of two environments and two tenants in one group, two of
// them with the same fingerprint (the same order of one type, sent to the
// tenant's production and to its test environment), are stored by the one
// statement that answers by claim: each request gets its own message, in
// its own environment, with its own business keys, and one delivery with
// its job to each destination there that takes its type.
func TestGroupCommitStoresNewMessagesByTheirClaims(t *testing.T) {
	t.Parallel()
	s := newGroupSite(t)
	keyed := testfactory.MessageType(t, s.pool, &testfactory.MessageTypeOpts{Code: "KEYED", Fields: []string{"id", "line"}})
	test := testfactory.Environment(t, s.pool, &testfactory.EnvironmentOpts{Slug: "test"})
	other, otherEnv := testfactory.TenantWithEnvironment(t, s.pool, "globex")
	otherKeyed := testfactory.MessageType(t, s.pool, &testfactory.MessageTypeOpts{Tenant: other.Slug, Code: "KEYED", Fields: []string{"id", "line"}})
	testfactory.Destination(t, s.pool, testfactory.DestinationOpts{URL: "http://127.0.0.1:9/orders"})
	testfactory.Destination(t, s.pool, testfactory.DestinationOpts{URL: "http://127.0.0.1:9/archive"})
	testfactory.Destination(t, s.pool, testfactory.DestinationOpts{URL: "http://127.0.0.1:9/gated", MessageTypes: []string{"GATED"}})
	testfactory.Destination(t, s.pool, testfactory.DestinationOpts{Environment: test.Slug, URL: "http://127.0.0.1:9/test"})
	testfactory.Destination(t, s.pool, testfactory.DestinationOpts{Tenant: other.Slug, URL: "http://127.0.0.1:9/globex"})
	inTest := s.req(keyed, `{"id": "A", "line": "1", "sent_to": "test"}`) // other bytes, or it would look retransmitted
	inTest.EnvironmentID = test.ID
	inOther := s.req(otherKeyed, `{"id": "A", "line": "1"}`)
	inOther.TenantID, inOther.EnvironmentID = other.ID, otherEnv.ID

	reqs := []ingest.Request{s.req(keyed, `{"id": "A", "line": "1"}`), inTest, s.req(keyed, `{"id": "B", "line": "2"}`), inOther}
	answers := s.group(t, reqs)
	require.Contains(t, s.observed(), observedGroup{size: 4}, "the four shared a transaction")
	for i, a := range answers {
		require.NoError(t, a.err)
		require.Equal(t, ingest.Created, a.res.Outcome, "request %d", i)
		var env int64
		var payload string
		require.NoError(t, s.pool.QueryRow(context.Background(),
			`SELECT environment_id, payload::text FROM messages WHERE id = $1 AND tenant_id = $2`,
			a.res.MessageID, reqs[i].TenantID).Scan(&env, &payload))
		require.Equal(t, reqs[i].EnvironmentID, env, "request %d", i)
		require.JSONEq(t, string(reqs[i].Payload), payload, "request %d", i)
	}
	require.Equal(t, 2, s.count(t, `SELECT count(DISTINCT fingerprint) FROM messages WHERE id = ANY($1)`,
		[]int64{answers[0].res.MessageID, answers[1].res.MessageID, answers[2].res.MessageID}),
		"the order in production and in test have one fingerprint")
	for i, want := range [][]string{{"A", "1"}, {"A", "1"}, {"B", "2"}, {"A", "1"}} {
		require.Equal(t, want, s.keyValues(t, answers[i].res.MessageID), "request %d", i)
	}
	require.Equal(t, 4, s.count(t, `SELECT count(*) FROM message_keys`), "the second key of each, and no more")

	destinations := func(id int64) int {
		return s.count(t, `SELECT count(*) FROM deliveries d JOIN destinations t ON t.id = d.destination_id
			JOIN river_job j ON (j.args->>'delivery_id')::bigint = d.id
			WHERE d.message_id = $1 AND t.tenant_id = d.tenant_id AND t.environment_id = d.environment_id`, id)
	}
	for i, want := range []int{2, 1, 2, 1} {
		require.Equal(t, want, destinations(answers[i].res.MessageID), "request %d: its environment's destinations, each with its job", i)
	}
	require.Equal(t, 9, s.count(t, `SELECT count(*) FROM deliveries`), "the six above and the gated leader's three")
}

// keyValues are the business key values stored for message id: the first,
// in the message's row, then the others, in message_keys.
func (s *groupSite) keyValues(t *testing.T, id int64) []string {
	t.Helper()
	var values []string
	require.NoError(t, s.pool.QueryRow(context.Background(), `SELECT m.first_key_value || array(
		SELECT k.value FROM message_keys k WHERE k.message_id = m.id AND k.tenant_id = m.tenant_id ORDER BY k.value)
		FROM messages m WHERE m.id = $1`, id).Scan(&values))
	return values
}
