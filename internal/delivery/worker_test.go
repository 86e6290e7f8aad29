package delivery_test

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/lefia/edihub/internal/auth"
	"github.com/lefia/edihub/internal/db"
	"github.com/lefia/edihub/internal/delivery"
	"github.com/lefia/edihub/internal/egress"
	"github.com/lefia/edihub/internal/ingest"
	"github.com/lefia/edihub/internal/messagetype"
)

// waitSettled waits until no delivery is pending, or fails the test.
func (b *testBundle) waitSettled(t *testing.T, within time.Duration) {
	t.Helper()
	require.Eventually(t, func() bool {
		return b.count(t, `SELECT count(*) FROM deliveries WHERE status = 'pending'`) == 0
	}, within, 50*time.Millisecond, "every delivery is made or failed")
}

func TestDeliversTheSignedPayloadOncePerDestination(t *testing.T) {
	t.Parallel()
	b := setup(t)
	first, second := newReceiver(t, nil), newReceiver(t, nil)
	firstID := b.destination(t, "production", first.srv.URL+"/hook")
	secondID := b.destination(t, "production", second.srv.URL+"/hook", "ORDERS05")
	var messages []int64
	for i := range 5 {
		messages = append(messages, b.receive(t, "production", "ORDERS05", strconv.Itoa(i)).MessageID)
	}
	b.run(t)
	b.waitSettled(t, 20*time.Second)

	require.Equal(t, 10, b.count(t, `SELECT count(*) FROM deliveries WHERE status = 'delivered' AND attempts = 1`))
	for _, rc := range []*receiver{first, second} {
		require.Empty(t, rc.bad, "every request carries a valid signature")
		require.Len(t, rc.counts(), 5)
	}
	id := delivery.WebhookID(messages[0], firstID)
	require.Equal(t, 1, first.counts()[id])
	require.NotEqual(t, id, delivery.WebhookID(messages[0], secondID))
	req := first.last[id]
	require.Equal(t, http.MethodPost, req.Method)
	require.Equal(t, "/hook", req.URL.Path)
	require.Equal(t, "application/json", req.Header.Get("Content-Type"))
	require.Equal(t, strconv.FormatInt(messages[0], 10), req.Header.Get("Edihub-Message-Id"))
	require.Equal(t, "ORDERS05", req.Header.Get("Edihub-Message-Type"))
	require.Equal(t, "D-0", req.Header.Get("Edihub-Docnum"))
	require.Equal(t, `{"id":"0"}`, string(first.bodies[id]), "the stored payload bytes")

	var status int
	var snippet string
	require.NoError(t, b.pool.QueryRow(context.Background(), `
		SELECT a.response_status, a.response_snippet FROM delivery_attempts a JOIN deliveries d ON d.id = a.delivery_id
		WHERE d.message_id = $1 AND d.destination_id = $2`, messages[0], firstID).Scan(&status, &snippet))
	require.Equal(t, http.StatusOK, status)
	require.Equal(t, "answer 200", snippet)
}

func TestFailedAttemptsAreRetriedWithTheSameWebhookIDThenFail(t *testing.T) {
	t.Parallel()
	b := setup(t)
	var calls atomic.Int64
	flaky := newReceiver(t, func(*http.Request) int {
		if calls.Add(1) == 1 {
			return http.StatusServiceUnavailable
		}
		return http.StatusOK
	})
	broken := newReceiver(t, func(*http.Request) int { return http.StatusInternalServerError })
	flakyID := b.destination(t, "production", flaky.srv.URL)
	brokenID := b.destination(t, "production", broken.srv.URL)
	msg := b.receive(t, "production", "ORDERS05", "1").MessageID
	b.run(t)
	b.waitSettled(t, 30*time.Second)

	require.Equal(t, map[string]int{delivery.WebhookID(msg, flakyID): 2}, flaky.counts(), "one retry, same webhook-id")
	require.Equal(t, map[string]int{delivery.WebhookID(msg, brokenID): 3}, broken.counts(), "MaxAttempts attempts, same webhook-id")

	var status string
	var attempts int
	require.NoError(t, b.pool.QueryRow(context.Background(),
		`SELECT status, attempts FROM deliveries WHERE destination_id = $1`, flakyID).Scan(&status, &attempts))
	require.Equal(t, delivery.StatusDelivered, status)
	require.Equal(t, 2, attempts)
	require.NoError(t, b.pool.QueryRow(context.Background(),
		`SELECT status, attempts FROM deliveries WHERE destination_id = $1`, brokenID).Scan(&status, &attempts))
	require.Equal(t, delivery.StatusFailed, status)
	require.Equal(t, 3, attempts)
	require.Equal(t, 3, b.count(t, `
		SELECT count(*) FROM delivery_attempts a JOIN deliveries d ON d.id = a.delivery_id
		WHERE d.destination_id = $1 AND a.response_status = 500 AND a.error = 'the destination answered 500 Internal Server Error'`, brokenID))

	// The alert rules read whether a destination is failing from the
	// destination: since its first failed attempt after the last success.
	require.Equal(t, 1, b.count(t, `SELECT count(*) FROM destinations WHERE id = $1 AND failing_since IS NULL`, flakyID),
		"a delivered attempt clears it")
	require.Equal(t, 1, b.count(t, `
		SELECT count(*) FROM destinations d WHERE d.id = $1
		AND d.failing_since = (SELECT min(a.started_at) FROM delivery_attempts a JOIN deliveries dl ON dl.id = a.delivery_id
		                       WHERE dl.destination_id = d.id)`, brokenID), "the first failed attempt starts it")
}

// Auto-pause pauses a destination's queue as an admin's pause does, marks
// it, and records who; an admin's resume clears the mark and gives the
// destination DESTINATION_AUTO_PAUSE_AFTER again from then.
func TestAutoPauseTxPausesOnceAndResumeClearsIt(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := context.Background()
	id := b.destination(t, "production", "http://127.0.0.1:9/")
	pause := func() bool {
		var paused bool
		require.NoError(t, db.WithPgxTx(ctx, b.pool, func(tx pgx.Tx) error {
			var err error
			paused, err = b.deliveries.AutoPauseTx(ctx, tx, "alerts", id, time.Now())
			return err
		}))
		return paused
	}
	require.True(t, pause())
	require.False(t, pause(), "paused already")
	require.Equal(t, 1, b.count(t, `SELECT count(*) FROM destinations WHERE id = $1 AND paused AND auto_paused_at IS NOT NULL`, id))
	require.Equal(t, 1, b.count(t, `SELECT count(*) FROM river_queue WHERE name = $1 AND paused_at IS NOT NULL`, delivery.QueueName(id)))
	require.Equal(t, 1, b.count(t, `SELECT count(*) FROM audit_events WHERE action = 'destination.paused' AND actor = 'alerts'
		AND details->>'automatic' = 'true'`))

	require.NoError(t, b.deliveries.SetPaused(ctx, "test", auth.GlobalScope(), id, false))
	require.Equal(t, 1, b.count(t, `SELECT count(*) FROM destinations WHERE id = $1 AND NOT paused AND auto_paused_at IS NULL
		AND resumed_at IS NOT NULL`, id))
}

func TestAHangingDestinationDoesNotSlowTheOthers(t *testing.T) {
	t.Parallel()
	b := setup(t)
	release := make(chan struct{})
	var inFlight, maxInFlight atomic.Int64
	hanging := newReceiver(t, func(r *http.Request) int {
		n := inFlight.Add(1)
		defer inFlight.Add(-1)
		for {
			m := maxInFlight.Load()
			if n <= m || maxInFlight.CompareAndSwap(m, n) {
				break
			}
		}
		select {
		case <-release:
		case <-r.Context().Done():
		}
		return http.StatusOK
	})
	fast := newReceiver(t, nil)
	hangingID := b.limitedDestination(t, hanging.srv.URL, 2)
	b.destination(t, "production", fast.srv.URL)
	for i := range 10 {
		b.receive(t, "production", "ORDERS05", strconv.Itoa(i))
	}
	// Two worker processes, each of which would run two at once on its
	// own: the limit is the destination's, across both. The hanging
	// attempts outlast the test rather than time out.
	b.cfg.Timeout = time.Minute
	b.run(t)
	b.run(t)
	t.Cleanup(func() { close(release) })

	require.Eventually(t, func() bool {
		return b.count(t, `SELECT count(*) FROM deliveries WHERE destination_id <> $1 AND status = 'delivered'`, hangingID) == 10
	}, 20*time.Second, 50*time.Millisecond, "the answering destination gets every message while the other hangs")
	require.Equal(t, 10, fast.total())
	require.Equal(t, 10, b.count(t, `SELECT count(*) FROM deliveries WHERE destination_id = $1 AND status = 'pending'`, hangingID))
	require.Eventually(t, func() bool { return maxInFlight.Load() == 2 }, 5*time.Second, 10*time.Millisecond)
	// Jobs that find no place free wait and look again meanwhile.
	time.Sleep(3 * time.Second)
	require.Equal(t, 2, hanging.total(), "the hanging destination never gets more than its limit at once, across processes")
	require.Equal(t, int64(2), maxInFlight.Load())
	require.Zero(t, b.count(t, `SELECT count(*) FROM delivery_attempts a JOIN deliveries d ON d.id = a.delivery_id WHERE d.destination_id = $1`, hangingID),
		"waiting for a place uses up no attempt")

	// A raised limit has its new place as soon as a waiting job looks
	// again, however it was raised: a job snoozed for a place (up to 1.5 s)
	// is made available again by River's scheduler, which runs every 5 s,
	// and a busy machine delays its runs; 20 s is several of them.
	_, err := b.pool.Exec(context.Background(), `UPDATE destinations SET max_concurrency = 3 WHERE id = $1`, hangingID)
	require.NoError(t, err)
	require.Eventually(t, func() bool { return maxInFlight.Load() == 3 }, 20*time.Second, 10*time.Millisecond)
	time.Sleep(2 * time.Second)
	require.Equal(t, 3, hanging.total(), "the third place is taken, and no fourth")
	require.Equal(t, 3, b.count(t, `SELECT count(*) FROM destination_places WHERE destination_id = $1 AND delivery_id IS NOT NULL`, hangingID))
}

func TestPausedDestinationGetsNothingUntilResumed(t *testing.T) {
	t.Parallel()
	b := setup(t)
	rc := newReceiver(t, nil)
	id := b.destination(t, "production", rc.srv.URL)
	require.NoError(t, b.deliveries.SetPaused(context.Background(), "test", auth.GlobalScope(), id, true))
	b.receive(t, "production", "ORDERS05", "1")
	b.run(t)
	// The queue is paused before any worker runs it; nothing may arrive
	// during several fetch intervals.
	time.Sleep(2 * time.Second)
	require.Zero(t, rc.total())

	require.NoError(t, b.deliveries.SetPaused(context.Background(), "test", auth.GlobalScope(), id, false))
	b.waitSettled(t, 20*time.Second)
	require.Equal(t, 1, rc.total())

	err := b.deliveries.SetPaused(context.Background(), "test", auth.TenantScope(b.tenantID+1000), id, true)
	require.ErrorContains(t, err, "does not exist", "another tenant's destination is not found")
}

func TestTwoWorkerProcessesDeliverEachMessageOnce(t *testing.T) {
	t.Parallel()
	b := setup(t)
	first, second := newReceiver(t, nil), newReceiver(t, nil)
	b.destination(t, "production", first.srv.URL)
	b.destination(t, "production", second.srv.URL)
	const messages = 40
	var wg sync.WaitGroup
	for i := range messages {
		wg.Go(func() { b.receive(t, "production", "ORDERS05", fmt.Sprint(i)) })
	}
	b.run(t)
	b.run(t)
	wg.Wait()
	b.waitSettled(t, 30*time.Second)

	for _, rc := range []*receiver{first, second} {
		counts := rc.counts()
		require.Len(t, counts, messages, "every message reaches every destination")
		for id, n := range counts {
			require.Equal(t, 1, n, "webhook-id %s delivered once", id)
		}
	}
	require.Equal(t, 2*messages, b.count(t, `SELECT count(*) FROM delivery_attempts`))
}

func TestConnectionsToRefusedAddressesAreNotMade(t *testing.T) {
	t.Parallel()
	b := setup(t)
	rc := newReceiver(t, nil)
	// The destination was allowed when it was created; the workers' policy
	// no longer opens loopback, as after a DNS change or a tightened
	// DESTINATION_ALLOWED_CIDRS.
	id := b.destination(t, "production", rc.srv.URL)
	closed, err := egress.ParsePolicy("")
	require.NoError(t, err)
	b.cfg.Egress = closed
	b.receive(t, "production", "ORDERS05", "1")
	b.run(t)
	b.waitSettled(t, 20*time.Second)

	require.Zero(t, rc.total())
	require.Equal(t, b.cfg.MaxAttempts, b.count(t, `
		SELECT count(*) FROM delivery_attempts a JOIN deliveries d ON d.id = a.delivery_id
		WHERE d.destination_id = $1 AND a.response_status IS NULL AND a.error LIKE '%address not allowed%loopback%'`, id))
}

// A receiver chooses its answer: a NUL byte or invalid UTF-8, which
// PostgreSQL cannot keep, and a right-to-left override or an escape
// sequence, which would mislead an admin's screen, are kept as escapes, in
// the answer's body and in its status line alike.
func TestHostileAnswersAreKeptAsEscapes(t *testing.T) {
	t.Parallel()
	b := setup(t)
	const body = "\u202e\x1b[31m\xff\x00 down"
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		conn, buf, err := http.NewResponseController(w).Hijack()
		if err != nil {
			return
		}
		defer func() { _ = conn.Close() }()
		fmt.Fprintf(buf, "HTTP/1.1 502 Bad \u202eGateway\r\nContent-Length: %d\r\nConnection: close\r\n\r\n%s", len(body), body)
		_ = buf.Flush()
	}))
	t.Cleanup(srv.Close)
	id := b.destination(t, "production", srv.URL)
	b.receive(t, "production", "ORDERS05", "1")
	b.run(t)
	b.waitSettled(t, 20*time.Second)

	require.Equal(t, b.cfg.MaxAttempts, b.count(t, `
		SELECT count(*) FROM delivery_attempts a JOIN deliveries d ON d.id = a.delivery_id
		WHERE d.destination_id = $1 AND a.response_status = 502
		  AND a.error = 'the destination answered 502 Bad \u202eGateway' AND a.response_snippet = $2`,
		id, `\u202e\x1b[31m\xff\x00 down`))
}

// On shutdown an attempt that does not finish within the shutdown time is
// cancelled, recorded, and goes back to the queue; the next worker process
// delivers it.
func TestShutdownReturnsUnfinishedAttemptsToTheQueue(t *testing.T) {
	t.Parallel()
	b := setup(t)
	var hang atomic.Bool
	hang.Store(true)
	arrived := make(chan struct{}, 10)
	rc := newReceiver(t, func(r *http.Request) int {
		arrived <- struct{}{}
		if hang.Load() {
			<-r.Context().Done()
		}
		return http.StatusOK
	})
	id := b.destination(t, "production", rc.srv.URL)
	b.receive(t, "production", "ORDERS05", "1")

	runner, err := delivery.NewRunner(b.pool, b.cfg, 500*time.Millisecond, slog.New(slog.DiscardHandler), nil)
	require.NoError(t, err)
	ctx, stop := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- runner.Run(ctx) }()
	select {
	case <-arrived:
	case <-time.After(20 * time.Second):
		t.Fatal("no attempt started")
	}
	stop()
	select {
	case err := <-done:
		require.NoError(t, err)
	case <-time.After(10 * time.Second):
		t.Fatal("the workers did not stop after the shutdown time")
	}
	require.Equal(t, 1, b.count(t, `SELECT count(*) FROM deliveries WHERE destination_id = $1 AND status = 'pending' AND attempts = 1`, id))
	require.Equal(t, 1, b.count(t, `SELECT count(*) FROM delivery_attempts WHERE response_status IS NULL AND error <> ''`),
		"the cut attempt is recorded")
	require.Equal(t, 1, b.count(t, `SELECT count(*) FROM river_job WHERE queue = $1 AND state IN ('available', 'retryable')`, delivery.QueueName(id)),
		"the job is back in the queue")

	hang.Store(false)
	b.run(t)
	b.waitSettled(t, 30*time.Second)
	require.Equal(t, 1, b.count(t, `SELECT count(*) FROM deliveries WHERE status = 'delivered' AND attempts = 2`))
}

func TestRetryGivesFailedDeliveriesANewRound(t *testing.T) {
	t.Parallel()
	b := setup(t)
	var up atomic.Bool
	rc := newReceiver(t, upOrDown(&up))
	first := b.destination(t, "production", rc.srv.URL+"/first")
	second := b.destination(t, "production", rc.srv.URL+"/second")
	b.receive(t, "production", "ORDERS05", "1")
	b.receive(t, "production", "ORDERS05", "2")
	b.run(t)
	b.waitSettled(t, 30*time.Second)
	require.Equal(t, 4, b.count(t, `SELECT count(*) FROM deliveries WHERE status = 'failed' AND attempts = 3`))
	up.Store(true)
	ctx := context.Background()

	var one int64
	require.NoError(t, b.pool.QueryRow(ctx, `SELECT min(id) FROM deliveries WHERE destination_id = $1`, first).Scan(&one))
	n, err := b.deliveries.Retry(ctx, "test", auth.TenantScope(b.tenantID+1000), delivery.Match{ID: &one})
	require.NoError(t, err)
	require.Zero(t, n, "another tenant's delivery is not touched")
	n, err = b.deliveries.Retry(ctx, "test", auth.TenantScope(b.tenantID), delivery.Match{ID: &one})
	require.NoError(t, err)
	require.Equal(t, 1, n)
	n, err = b.deliveries.Retry(ctx, "test", auth.GlobalScope(), delivery.Match{ID: &one})
	require.NoError(t, err)
	require.Zero(t, n, "a delivery already queued again is not queued twice")
	b.waitSettled(t, 30*time.Second)
	require.Equal(t, 1, b.count(t, `SELECT count(*) FROM deliveries WHERE id = $1 AND status = 'delivered' AND attempts = 4`, one))

	n, err = b.deliveries.Retry(ctx, "test", auth.GlobalScope(), delivery.Match{DestinationID: &second})
	require.NoError(t, err)
	require.Equal(t, 2, n, "every failed delivery of one destination")
	n, err = b.deliveries.Retry(ctx, "test", auth.GlobalScope(), delivery.Match{})
	require.NoError(t, err)
	require.Equal(t, 1, n, "every failed delivery left")
	b.waitSettled(t, 30*time.Second)
	require.Equal(t, 4, b.count(t, `SELECT count(*) FROM deliveries WHERE status = 'delivered'`))
	require.Equal(t, 8, b.count(t, `SELECT count(*) FROM river_job WHERE kind = 'delivery'`),
		"one job per delivery and round: four at first, four retries")
}

// A message that arrived as IDoc-XML is delivered as the bytes received,
// with the content type they came with, not as the JSON view its key paths
// read.
func TestDeliversTheReceivedBytesWithTheirContentType(t *testing.T) {
	t.Parallel()
	b := setup(t)
	rc := newReceiver(t, nil)
	b.destination(t, "production", rc.srv.URL+"/hook")
	received := []byte(`<?xml version="1.0" encoding="ISO-8859-1"?><ORDERS05><IDOC BEGIN="1"><EDI_DC40 SEGMENT="1"><DOCNUM>7</DOCNUM></EDI_DC40></IDOC></ORDERS05>`)
	mt := b.types["ORDERS05"]
	res, err := b.ingest.Receive(context.Background(), ingest.Request{
		TenantID: b.tenantID, EnvironmentID: b.envs["production"], MessageType: messagetype.Prepare(mt), Docnum: "7",
		Payload:  []byte(`{"id":"xml-7"}`),
		Received: &ingest.Received{ContentType: "application/xml; charset=ISO-8859-1", Bytes: received},
		Source:   ingest.Source{Endpoint: ingest.EndpointReceiveMessage, RemoteAddr: "192.0.2.1", Actor: "test"},
	})
	require.NoError(t, err)
	require.Equal(t, ingest.Created, res.Outcome)
	b.run(t)
	b.waitSettled(t, 20*time.Second)

	var destinationID int64
	require.NoError(t, b.pool.QueryRow(context.Background(), `SELECT destination_id FROM deliveries WHERE message_id = $1`, res.MessageID).Scan(&destinationID))
	id := delivery.WebhookID(res.MessageID, destinationID)
	require.Empty(t, rc.bad, "the signature covers the received bytes")
	require.Equal(t, string(received), string(rc.bodies[id]))
	require.Equal(t, "application/xml; charset=ISO-8859-1", rc.last[id].Header.Get("Content-Type"))
}

// A bulk replay queues, in the background, every failed delivery that
// matches its filter within the scope of the admin who started it, and
// reports how many.
func TestReplayQueuesTheFailedDeliveriesThatMatch(t *testing.T) {
	t.Parallel()
	b := setup(t)
	var up atomic.Bool
	rc := newReceiver(t, upOrDown(&up))
	orders := b.destination(t, "production", rc.srv.URL+"/orders")
	b.destination(t, "production", rc.srv.URL+"/all")
	for i := range 3 {
		b.receive(t, "production", "ORDERS05", strconv.Itoa(i))
	}
	b.receive(t, "production", "INVOIC02", "9")
	b.run(t)
	b.waitSettled(t, 30*time.Second)
	require.Equal(t, 8, b.count(t, `SELECT count(*) FROM deliveries WHERE status = 'failed'`))
	up.Store(true)
	ctx := context.Background()

	code := "ORDERS05"
	match := delivery.Match{DestinationID: &orders, MessageType: &code}
	other := auth.User{ID: 99, Role: auth.RoleAdmin, TenantID: ptr(b.tenantID + 1000)}
	id, err := b.deliveries.StartReplay(ctx, other, match)
	require.NoError(t, err)
	require.Eventually(t, func() bool {
		r, err := b.deliveries.Replay(ctx, auth.TenantScope(b.tenantID+1000), id)
		require.NoError(t, err)
		return r.Done
	}, 20*time.Second, 50*time.Millisecond)
	r, err := b.deliveries.Replay(ctx, auth.TenantScope(b.tenantID+1000), id)
	require.NoError(t, err)
	require.Equal(t, delivery.ReplayState{ID: id, Done: true}, r, "another tenant's replay queues none of acme's")
	_, err = b.deliveries.Replay(ctx, auth.TenantScope(b.tenantID), id)
	require.ErrorContains(t, err, "does not exist", "a replay is reported on in its own scope only")

	admin := auth.User{ID: 7, Role: auth.RoleAdmin, TenantID: &b.tenantID}
	id, err = b.deliveries.StartReplay(ctx, admin, match)
	require.NoError(t, err)
	require.Eventually(t, func() bool {
		r, err = b.deliveries.Replay(ctx, auth.TenantScope(b.tenantID), id)
		require.NoError(t, err)
		return r.Done
	}, 20*time.Second, 50*time.Millisecond)
	require.Equal(t, 3, r.Queued)
	b.waitSettled(t, 30*time.Second)
	require.Equal(t, 3, b.count(t, `SELECT count(*) FROM deliveries WHERE status = 'delivered'`))
	require.Equal(t, 5, b.count(t, `SELECT count(*) FROM deliveries WHERE status = 'failed'`), "the other destination's and the invoice's stay failed")
	require.Equal(t, 1, b.count(t, `SELECT count(*) FROM audit_events
		WHERE action = 'delivery.retried' AND actor = 'user:7' AND tenant_id = $1 AND (details->>'queued')::int = 3`, b.tenantID))
}

func ptr[T any](v T) *T { return &v }

// upOrDown answers 200 while up is set, else 502.
func upOrDown(up *atomic.Bool) func(*http.Request) int {
	return func(*http.Request) int {
		if up.Load() {
			return http.StatusOK
		}
		return http.StatusBadGateway
	}
}

// Deleting a destination while an attempt to it hangs cancels that
// delivery and the waiting ones: the attempt is stopped, nothing is
// retried, no later job sends anything, and every delivery says cancelled.
func TestDeletingADestinationCancelsItsDeliveriesInFlight(t *testing.T) {
	t.Parallel()
	b := setup(t)
	release := make(chan struct{})
	hanging := newReceiver(t, func(r *http.Request) int {
		select {
		case <-release:
		case <-r.Context().Done():
		}
		return http.StatusServiceUnavailable
	})
	t.Cleanup(func() { close(release) })
	id := b.limitedDestination(t, hanging.srv.URL, 1)
	for i := range 3 {
		b.receive(t, "production", "ORDERS05", strconv.Itoa(i))
	}
	b.cfg.Timeout = time.Minute
	b.run(t)
	require.Eventually(t, func() bool { return hanging.total() == 1 }, 10*time.Second, 10*time.Millisecond, "one attempt hangs")

	cancelled, err := b.deliveries.DeleteDestination(context.Background(), "test", auth.GlobalScope(), id)
	require.NoError(t, err)
	require.Equal(t, int64(3), cancelled)
	require.Eventually(t, func() bool {
		return b.count(t, `SELECT count(*) FROM river_job WHERE queue = $1 AND state <> 'cancelled'`, delivery.QueueName(id)) == 0
	}, 10*time.Second, 20*time.Millisecond, "the running job is cancelled too, not retried")
	time.Sleep(time.Second)
	require.Equal(t, 1, hanging.total(), "nothing more is sent")
	require.Equal(t, 3, b.count(t, `SELECT count(*) FROM deliveries WHERE destination_id = $1 AND status = 'cancelled'`, id))

	_, err = b.deliveries.DeleteDestination(context.Background(), "test", auth.GlobalScope(), id)
	require.ErrorContains(t, err, "does not exist", "deleted once")
}
