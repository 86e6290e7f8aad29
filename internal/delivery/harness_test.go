package delivery_test

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"

	"github.com/lefia/edihub/internal/config"
	"github.com/lefia/edihub/internal/db"
	"github.com/lefia/edihub/internal/delivery"
	"github.com/lefia/edihub/internal/egress"
	"github.com/lefia/edihub/internal/ingest"
	"github.com/lefia/edihub/internal/messagetype"
	"github.com/lefia/edihub/internal/pgtest"
	"github.com/lefia/edihub/internal/signature"
	"github.com/lefia/edihub/internal/testfactory"
)

// testBundle is a database with tenant acme, environments production and
// sandbox, the message types ORDERS05 and INVOIC02, and the services that
// store messages and their deliveries.
type testBundle struct {
	pool       *pgxpool.Pool
	ingest     *ingest.Service
	deliveries *delivery.Service
	tenantID   int64
	envs       map[string]int64
	types      map[string]db.MessageType
	cfg        config.Delivery
}

func setup(t testing.TB) *testBundle {
	t.Helper()
	pool := pgtest.Pool(t)
	tenant, production := testfactory.TenantWithEnvironment(t, pool, "acme")
	sandbox := testfactory.Environment(t, pool, &testfactory.EnvironmentOpts{Slug: "sandbox"})
	b := &testBundle{
		pool: pool, tenantID: tenant.ID,
		envs:  map[string]int64{"production": production.ID, "sandbox": sandbox.ID},
		types: map[string]db.MessageType{},
	}
	for _, code := range []string{"ORDERS05", "INVOIC02"} {
		b.types[code] = testfactory.MessageType(t, pool, &testfactory.MessageTypeOpts{Code: code, Fields: []string{"id"}})
	}
	b.cfg = config.Delivery{
		Egress: loopback(t), Timeout: 5 * time.Second, MaxAttempts: 3, RetryBase: 50 * time.Millisecond,
		SyncInterval: 100 * time.Millisecond,
	}
	b.deliveries = delivery.NewService(pool, b.cfg.MaxAttempts)
	b.ingest = ingest.New(pool, time.Hour, b.deliveries)
	return b
}

// loopback is the egress policy of the tests, whose receivers listen on
// loopback.
func loopback(t testing.TB) egress.Policy {
	t.Helper()
	policy, err := egress.ParsePolicy("127.0.0.0/8,::1/128")
	require.NoError(t, err)
	return policy
}

// destination creates a destination in env for the given types (none: all).
func (b *testBundle) destination(t testing.TB, env, url string, types ...string) int64 {
	t.Helper()
	id, _ := testfactory.Destination(t, b.pool, testfactory.DestinationOpts{
		Environment: env, URL: url, MessageTypes: types, Secret: testSecret,
	})
	return id
}

// limitedDestination creates a production destination for every type
// with a concurrency limit.
func (b *testBundle) limitedDestination(t testing.TB, url string, concurrency int32) int64 {
	t.Helper()
	id, _ := testfactory.Destination(t, b.pool, testfactory.DestinationOpts{URL: url, Secret: testSecret, Concurrency: concurrency})
	return id
}

const testSecret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"

// receive stores a message of type code in env, with the given id (the
// type's duplicate key).
func (b *testBundle) receive(t testing.TB, env, code, id string) ingest.Result {
	t.Helper()
	payload, err := json.Marshal(map[string]string{"id": id})
	require.NoError(t, err)
	mt := b.types[code]
	res, err := b.ingest.Receive(context.Background(), ingest.Request{
		TenantID: b.tenantID, EnvironmentID: b.envs[env], MessageType: messagetype.Prepare(mt), Docnum: "D-" + id, Payload: payload,
		Source: ingest.Source{Endpoint: ingest.EndpointReceiveMessage, RemoteAddr: "192.0.2.1", Actor: "test"},
	})
	require.NoError(t, err)
	return res
}

func (b *testBundle) count(t testing.TB, query string, args ...any) int {
	t.Helper()
	return pgtest.Count(t, b.pool, query, args...)
}

// run starts a Runner (a worker process) until the test ends.
func (b *testBundle) run(t testing.TB) { b.runOn(t, b.pool) }

// runOn starts a Runner on pool until the test ends.
func (b *testBundle) runOn(t testing.TB, pool *pgxpool.Pool) *delivery.Runner {
	t.Helper()
	runner, err := delivery.NewRunner(pool, b.cfg, 2*time.Second, slog.New(slog.DiscardHandler), nil)
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- runner.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		require.NoError(t, <-done)
	})
	return runner
}

// receiver is a destination's HTTP endpoint. It verifies every request's
// Standard Webhooks signature and counts requests by webhook-id; answer
// decides the status it replies with.
type receiver struct {
	srv   *httptest.Server
	conns atomic.Int64 // connections opened to it
	mu    sync.Mutex
	all   int // requests
	// when the first request arrived, and the last was answered
	firstAt, lastDone time.Time
	byID              map[string]int
	first             map[string]time.Time // when each webhook-id first arrived
	last              map[string]*http.Request
	bodies            map[string][]byte
	bad               []string // why requests failed verification
	answer            func(r *http.Request) int
}

func newReceiver(t testing.TB, answer func(r *http.Request) int) *receiver {
	t.Helper()
	rc := &receiver{byID: map[string]int{}, first: map[string]time.Time{}, last: map[string]*http.Request{}, bodies: map[string][]byte{}, answer: answer}
	rc.srv = httptest.NewUnstartedServer(http.HandlerFunc(rc.serve))
	rc.srv.Config.ConnState = func(_ net.Conn, state http.ConnState) {
		if state == http.StateNew {
			rc.conns.Add(1)
		}
	}
	rc.srv.Start()
	t.Cleanup(rc.srv.Close)
	return rc
}

func (rc *receiver) serve(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(r.Body)
	rc.mu.Lock()
	if err != nil {
		rc.bad = append(rc.bad, err.Error())
	} else if _, err := signature.Verify(signature.StandardWebhooks, []string{testSecret}, r.Header, body, time.Now()); err != nil {
		rc.bad = append(rc.bad, err.Error())
	}
	id := r.Header.Get("webhook-id")
	if rc.byID[id] == 0 {
		rc.first[id] = time.Now()
	}
	rc.byID[id]++
	rc.all++
	if rc.firstAt.IsZero() {
		rc.firstAt = time.Now()
	}
	rc.last[id] = r
	rc.bodies[id] = body
	rc.mu.Unlock()
	status := http.StatusOK
	if rc.answer != nil {
		status = rc.answer(r)
	}
	w.WriteHeader(status)
	_, _ = io.WriteString(w, "answer "+strconv.Itoa(status))
	rc.mu.Lock()
	rc.lastDone = time.Now()
	rc.mu.Unlock()
}

// counts returns a copy of the requests counted by webhook-id.
func (rc *receiver) counts() map[string]int {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	out := make(map[string]int, len(rc.byID))
	for id, n := range rc.byID {
		out[id] = n
	}
	return out
}

// span is when the first request arrived and when the last one was
// answered.
func (rc *receiver) span() (first, last time.Time) {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return rc.firstAt, rc.lastDone
}

func (rc *receiver) total() int {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return rc.all
}
