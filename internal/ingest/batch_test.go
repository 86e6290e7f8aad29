package ingest_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"

	"github.com/lefia/edihub/internal/delivery"
	"github.com/lefia/edihub/internal/ingest"
	"github.com/lefia/edihub/internal/pgtest"
	"github.com/lefia/edihub/internal/testfactory"
)

// batchSite is a tenant with one order type keyed by the order id, and the
// ingest service that stores into it.
type batchSite struct {
	pool *pgxpool.Pool
	in   *ingest.Service
	req  func(payload string) ingest.Request
}

func newBatchSite(t *testing.T) *batchSite {
	t.Helper()
	pool := pgtest.Pool(t)
	tenant, env := testfactory.TenantWithEnvironment(t, pool, "acme")
	window := 24
	mt := testfactory.MessageType(t, pool, &testfactory.MessageTypeOpts{Fields: []string{"id"}, WindowHours: &window})
	return &batchSite{
		pool: pool,
		in:   ingest.New(pool, time.Hour, delivery.NewService(pool, 3)),
		req: func(payload string) ingest.Request {
			return ingest.Request{
				TenantID: tenant.ID, EnvironmentID: env.ID, MessageType: mt, Payload: []byte(payload),
				Source: ingest.Source{Endpoint: ingest.EndpointReceiveMessages, RemoteAddr: "192.0.2.1", Actor: "test"},
			}
		},
	}
}

func (s *batchSite) batch(t *testing.T, payloads ...string) []ingest.Result {
	t.Helper()
	b := ingest.Batch{}
	for _, p := range payloads {
		b.Items = append(b.Items, s.req(p))
	}
	res, err := s.in.ReceiveBatch(context.Background(), b)
	require.NoError(t, err)
	require.Len(t, res.Results, len(payloads))
	return res.Results
}

func (s *batchSite) count(t *testing.T, query string) int {
	t.Helper()
	var n int
	require.NoError(t, s.pool.QueryRow(context.Background(), query).Scan(&n))
	return n
}

// A batch larger than one pipeline's bytes goes in several, in order, in
// the one transaction: a copy in a later pipeline is the duplicate of its
// original in an earlier one, and the results keep the batch's order.
func TestBatchBeyondOnePipeline(t *testing.T) {
	t.Parallel()
	s := newBatchSite(t)
	filler := strings.Repeat("x", 200<<10)
	var payloads []string
	for i := range 12 { // 2.4 MiB: three pipelines
		payloads = append(payloads, fmt.Sprintf(`{"id": "%d", "filler": %q}`, i, filler))
	}
	payloads = append(payloads, payloads[0], fmt.Sprintf(`{"id": "11", "filler": %q}`, filler+"changed"))
	res := s.batch(t, payloads...)
	for i := range 12 {
		require.Equal(t, ingest.Created, res[i].Outcome, "item %d", i)
	}
	require.Equal(t, ingest.DuplicateFingerprint, res[12].Outcome)
	require.Equal(t, res[0].MessageID, res[12].MessageID)
	require.Equal(t, ingest.DuplicateFingerprint, res[13].Outcome)
	require.Equal(t, res[11].MessageID, res[13].MessageID)
	require.Equal(t, 12, s.count(t, `SELECT count(*) FROM messages`))
	require.Equal(t, 1, s.count(t, `SELECT count(*) FROM blocked_copies`))
}

// A batch's messages are decided in order although their statements are
// sent together: a later copy of an earlier message is its duplicate, and a
// changed copy is kept for review.
func TestBatchDecidesInOrder(t *testing.T) {
	t.Parallel()
	s := newBatchSite(t)
	res := s.batch(t, `{"id": "A"}`, `{"id": "B"}`, `{"id": "A", "note": "changed"}`, `{"id": "A"}`)
	require.Equal(t, ingest.Created, res[0].Outcome)
	require.Equal(t, ingest.Created, res[1].Outcome)
	for _, dup := range res[2:] {
		require.Equal(t, ingest.DuplicateFingerprint, dup.Outcome)
		require.Equal(t, res[0].MessageID, dup.MessageID, "the first A holds the fingerprint")
	}
	require.Equal(t, 2, s.count(t, `SELECT count(*) FROM messages`))
	require.Equal(t, 2, s.count(t, `SELECT count(*) FROM audit_events WHERE action = 'message.duplicate_blocked'`))
	require.Equal(t, 1, s.count(t, `SELECT count(*) FROM blocked_copies`), "only the changed copy is kept")
}

// A holder older than the window gives its fingerprint up to the batch's
// first copy, which the second copy of the same batch then repeats.
func TestBatchReclaimsAnExpiredFingerprint(t *testing.T) {
	t.Parallel()
	s := newBatchSite(t)
	old := s.batch(t, `{"id": "A"}`)[0]
	_, err := s.pool.Exec(context.Background(), `UPDATE messages SET received_at = now() - interval '25 hours' WHERE id = $1`, old.MessageID)
	require.NoError(t, err)

	res := s.batch(t, `{"id": "A", "n": 1}`, `{"id": "A", "n": 2}`)
	require.Equal(t, ingest.Created, res[0].Outcome, "the expired holder does not block")
	require.NotEqual(t, old.MessageID, res[0].MessageID)
	require.Equal(t, ingest.DuplicateFingerprint, res[1].Outcome)
	require.Equal(t, res[0].MessageID, res[1].MessageID, "the second copy repeats the first, not the expired holder")
	var oldFingerprint *[]byte
	require.NoError(t, s.pool.QueryRow(context.Background(), `SELECT fingerprint FROM messages WHERE id = $1`, old.MessageID).Scan(&oldFingerprint))
	require.Nil(t, oldFingerprint, "the expired holder released its claim")
}

// Many batches carrying the same orders in different orders at once store
// each order exactly once and block every other copy, without deadlocks.
func TestConcurrentBatchesStoreEachMessageOnce(t *testing.T) {
	t.Parallel()
	s := newBatchSite(t)
	const batches, orders = 16, 20
	var wg sync.WaitGroup
	errs := make(chan error, batches)
	for i := range batches {
		wg.Add(1)
		go func() {
			defer wg.Done()
			b := ingest.Batch{}
			for _, n := range rand.Perm(orders) {
				b.Items = append(b.Items, s.req(fmt.Sprintf(`{"id": "order-%d", "batch": %d}`, n, i)))
			}
			_, err := s.in.ReceiveBatch(context.Background(), b)
			errs <- err
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}
	require.Equal(t, orders, s.count(t, `SELECT count(*) FROM messages`))
	require.Equal(t, orders, s.count(t, `SELECT count(DISTINCT fingerprint) FROM messages`))
	require.Equal(t, (batches-1)*orders, s.count(t, `SELECT count(*) FROM audit_events WHERE action = 'message.duplicate_blocked'`))
	var unblocked int
	require.NoError(t, s.pool.QueryRow(context.Background(), `SELECT count(*) FROM audit_events e
		WHERE e.action = 'message.duplicate_blocked' AND NOT EXISTS (SELECT FROM messages m WHERE m.id = e.message_id)`).Scan(&unblocked))
	require.Zero(t, unblocked, "every blocked copy names a stored message")
}
