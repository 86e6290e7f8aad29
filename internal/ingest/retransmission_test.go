package ingest_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"

	"github.com/lefia/edihub/internal/db"
	"github.com/lefia/edihub/internal/delivery"
	"github.com/lefia/edihub/internal/ingest"
	"github.com/lefia/edihub/internal/messagetype"
	"github.com/lefia/edihub/internal/pgtest"
	"github.com/lefia/edihub/internal/testfactory"
)

// retransmissionSite is a tenant with two environments and an order type
// keyed by the order's id with a window of 24 hours. A trigger counts the
// rows offered to messages' insert (a BEFORE trigger fires for a row that
// then conflicts too), which tells a retransmission decided without its
// payload from one that went through the insert.
type retransmissionSite struct {
	pool                *pgxpool.Pool
	production, staging db.Environment
	tenant              db.Tenant
	orders              db.MessageType
	newService          func(lanes int) *ingest.Service
}

func newRetransmissionSite(t *testing.T) *retransmissionSite {
	t.Helper()
	pool := pgtest.Pool(t)
	tenant, production := testfactory.TenantWithEnvironment(t, pool, "acme")
	staging := testfactory.Environment(t, pool, &testfactory.EnvironmentOpts{Tenant: "acme", Slug: "staging"})
	window := 24
	orders := testfactory.MessageType(t, pool, &testfactory.MessageTypeOpts{Fields: []string{"id"}, WindowHours: &window})
	_, err := pool.Exec(context.Background(), `
		CREATE TABLE offered (message_id bigint);
		CREATE FUNCTION count_offered() RETURNS trigger LANGUAGE plpgsql AS $$
		BEGIN
			INSERT INTO offered VALUES (NEW.id);
			RETURN NEW;
		END $$;
		CREATE TRIGGER count_offered BEFORE INSERT ON messages FOR EACH ROW EXECUTE FUNCTION count_offered();`)
	require.NoError(t, err)
	return &retransmissionSite{
		pool: pool, tenant: tenant, production: production, staging: staging, orders: orders,
		newService: func(lanes int) *ingest.Service {
			return ingest.New(pool, time.Hour, delivery.NewService(pool, 3), ingest.WithGroupLanes(lanes))
		},
	}
}

// order is a request for the order with payload, into env.
func (s *retransmissionSite) order(env db.Environment, payload string) ingest.Request {
	return ingest.Request{
		TenantID: s.tenant.ID, EnvironmentID: env.ID, MessageType: messagetype.Prepare(s.orders), Payload: []byte(payload),
		Source: ingest.Source{Endpoint: ingest.EndpointReceiveMessages, RemoteAddr: "192.0.2.1", Actor: "test"},
	}
}

func (s *retransmissionSite) count(t *testing.T, query string, args ...any) int {
	t.Helper()
	return pgtest.Count(t, s.pool, query, args...)
}

func (s *retransmissionSite) offered(t *testing.T) int {
	t.Helper()
	return s.count(t, `SELECT count(*) FROM offered`)
}

// batchOf receives reqs as one batch through in.
func batchOf(t *testing.T, in *ingest.Service, reqs ...ingest.Request) []ingest.Result {
	t.Helper()
	res, err := in.ReceiveBatch(context.Background(), ingest.Batch{Items: reqs})
	require.NoError(t, err)
	require.Len(t, res.Results, len(reqs))
	return res.Results
}

// auditedEvent is what an audit event of a blocked duplicate records.
type auditedEvent struct {
	Environment, MessageType, Message int64
	Action, Actor, MatchKey, Details  string
}

// eventsAfter lists the audit events with an id above after, in order.
func (s *retransmissionSite) eventsAfter(t *testing.T, after int64) []auditedEvent {
	t.Helper()
	rows, err := s.pool.Query(context.Background(), `
		SELECT environment_id, message_type_id, message_id, action, actor, match_key, details::text
		FROM audit_events WHERE id > $1 ORDER BY id`, after)
	require.NoError(t, err)
	defer rows.Close()
	var events []auditedEvent
	for rows.Next() {
		var e auditedEvent
		require.NoError(t, rows.Scan(&e.Environment, &e.MessageType, &e.Message, &e.Action, &e.Actor, &e.MatchKey, &e.Details))
		events = append(events, e)
	}
	require.NoError(t, rows.Err())
	return events
}

func (s *retransmissionSite) lastEvent(t *testing.T) int64 {
	t.Helper()
	var id int64
	require.NoError(t, s.pool.QueryRow(context.Background(), `SELECT coalesce(max(id), 0) FROM audit_events`).Scan(&id))
	return id
}

// A retransmission (the same bytes the tenant sent lately, every message
// held inside its window with the same content) is decided without its
// payloads reaching the insert, and with the answers and audit events a
// service that never saw the bytes (and so decides through the insert)
// gives: for a batch and for a single message.
func TestRetransmissionIsBlockedAsAnyDuplicate(t *testing.T) {
	t.Parallel()
	s := newRetransmissionSite(t)
	seen, unseen := s.newService(ingest.DefaultGroupLanes), s.newService(ingest.DefaultGroupLanes)
	ctx := context.Background()
	orders := []ingest.Request{
		s.order(s.production, `{"id": "A"}`), s.order(s.production, `{"id": "B", "lines": [1, 2]}`),
		s.order(s.production, `{"id": "A"}`),
	}
	stored := batchOf(t, seen, orders...)
	require.Equal(t, []ingest.Outcome{ingest.Created, ingest.Created, ingest.DuplicateFingerprint},
		[]ingest.Outcome{stored[0].Outcome, stored[1].Outcome, stored[2].Outcome})

	before := s.lastEvent(t)
	throughInsert := batchOf(t, unseen, orders...)
	afterInsert := s.lastEvent(t)
	offered := s.offered(t)
	retransmitted := batchOf(t, seen, orders...)
	require.Equal(t, offered, s.offered(t), "no message of the retransmitted batch is offered to the insert")
	require.Equal(t, throughInsert, retransmitted)
	for i, res := range retransmitted {
		require.Equal(t, ingest.DuplicateFingerprint, res.Outcome, "item %d", i)
		require.Equal(t, stored[i].MessageID, res.MessageID, "item %d", i)
	}
	require.Equal(t, s.eventsAfter(t, before)[:len(orders)], s.eventsAfter(t, afterInsert))

	before = s.lastEvent(t)
	single, err := unseen.Receive(ctx, orders[1])
	require.NoError(t, err)
	afterInsert = s.lastEvent(t)
	offered = s.offered(t)
	again, err := seen.Receive(ctx, orders[1])
	require.NoError(t, err)
	require.Equal(t, offered, s.offered(t), "a retransmitted single message is not offered to the insert")
	require.Equal(t, single, again)
	require.Equal(t, s.eventsAfter(t, before)[:1], s.eventsAfter(t, afterInsert))

	require.Equal(t, 2, s.count(t, `SELECT count(*) FROM messages`))
	require.Equal(t, 0, s.count(t, `SELECT count(*) FROM blocked_copies`))
	require.Equal(t, 9, s.count(t, `SELECT count(*) FROM audit_events WHERE action = 'message.duplicate_blocked'`))
}

// Bytes the tenant sent lately that are not a plain retransmission are
// decided through the insert, exactly as if never seen: a batch whose
// messages are all seen but one of which has no holder in its
// environment, a copy whose holder has other content (its kept copy
// counts it again), and a copy whose holder is past its window (it is stored).
func TestRetransmissionNotHeldIsDecidedThroughTheInsert(t *testing.T) {
	t.Parallel()
	s := newRetransmissionSite(t)
	in := s.newService(ingest.DefaultGroupLanes)
	ctx := context.Background()
	receive := func(req ingest.Request) ingest.Result {
		t.Helper()
		res, err := in.Receive(ctx, req)
		require.NoError(t, err)
		return res
	}

	t.Run("one message of the batch held in no environment of its", func(t *testing.T) {
		a := receive(s.order(s.production, `{"id": "A"}`))
		require.Equal(t, ingest.Created, a.Outcome)
		offered, events := s.offered(t), s.lastEvent(t)
		res := batchOf(t, in, s.order(s.production, `{"id": "A"}`), s.order(s.staging, `{"id": "A"}`))
		require.Equal(t, ingest.DuplicateFingerprint, res[0].Outcome)
		require.Equal(t, a.MessageID, res[0].MessageID)
		require.Equal(t, ingest.Created, res[1].Outcome, "the same order in another environment is new there")
		require.Equal(t, offered+2, s.offered(t), "the batch went through the insert")
		require.Len(t, s.eventsAfter(t, events), 1, "the retransmission's event is recorded once")
		require.Equal(t, 1, s.count(t, `SELECT count(*) FROM messages WHERE environment_id = $1`, s.staging.ID))
	})

	t.Run("a holder with other content", func(t *testing.T) {
		original := receive(s.order(s.production, `{"id": "C", "quantity": 1}`))
		changed := s.order(s.production, `{"id": "C", "quantity": 2}`)
		first := receive(changed)
		again := receive(changed)
		for _, res := range []ingest.Result{first, again} {
			require.Equal(t, ingest.DuplicateFingerprint, res.Outcome)
			require.Equal(t, original.MessageID, res.MessageID)
		}
		require.Equal(t, 1, s.count(t, `SELECT count(*) FROM blocked_copies WHERE original_message_id = $1 AND copies = 2`, original.MessageID),
			"the changed copy is kept, and its retransmission counted on it")
		require.Equal(t, 2, s.count(t, `SELECT count(*) FROM audit_events
			WHERE message_id = $1 AND details->>'content' = 'changed'`, original.MessageID))
	})

	t.Run("a holder past its window", func(t *testing.T) {
		order := s.order(s.production, `{"id": "W"}`)
		old := receive(order)
		_, err := s.pool.Exec(ctx, `UPDATE messages SET received_at = now() - interval '25 hours' WHERE id = $1`, old.MessageID)
		require.NoError(t, err)
		renewed := receive(order)
		require.Equal(t, ingest.Created, renewed.Outcome)
		require.NotEqual(t, old.MessageID, renewed.MessageID)
		require.Equal(t, 0, s.count(t, `SELECT count(*) FROM messages WHERE id = $1 AND fingerprint IS NOT NULL`, old.MessageID),
			"the old holder gave its fingerprint up")
	})
}

// Many copies of an order at once, with group commit off and with one and
// two lanes of messages to store: copies the tenant sent lately and that
// are held are each blocked once with its event; copies of bytes seen in
// another environment, where nothing holds them yet, store the order there
// exactly once.
func TestRetransmissionsAtOnce(t *testing.T) {
	t.Parallel()
	for _, lanes := range []int{0, 1, 2} {
		t.Run(fmt.Sprintf("lanes=%d", lanes), func(t *testing.T) {
			t.Parallel()
			s := newRetransmissionSite(t)
			in := s.newService(lanes)
			const copies = 50
			held, err := in.Receive(context.Background(), s.order(s.production, `{"id": "A"}`))
			require.NoError(t, err)

			reqs := make([]ingest.Request, copies)
			for i := range reqs {
				reqs[i] = s.order(s.production, `{"id": "A"}`)
			}
			require.Equal(t, map[ingest.Outcome]int{ingest.DuplicateFingerprint: copies}, receiveAtOnce(t, in, reqs))
			require.Equal(t, copies, s.count(t, `SELECT count(*) FROM audit_events WHERE message_id = $1`, held.MessageID))

			for i := range reqs {
				reqs[i] = s.order(s.staging, `{"id": "A"}`)
			}
			require.Equal(t, map[ingest.Outcome]int{ingest.Created: 1, ingest.DuplicateFingerprint: copies - 1}, receiveAtOnce(t, in, reqs))
			require.Equal(t, 1, s.count(t, `SELECT count(*) FROM messages WHERE environment_id = $1`, s.staging.ID))
			require.Equal(t, copies-1, s.count(t, `SELECT count(*) FROM audit_events
				WHERE message_id = (SELECT id FROM messages WHERE environment_id = $1)`, s.staging.ID))
			require.Equal(t, 2, s.count(t, `SELECT count(*) FROM messages`))
		})
	}
}
