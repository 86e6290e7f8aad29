package server_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/lefia/edihub/internal/config"
	"github.com/lefia/edihub/internal/pgtest"
	"github.com/lefia/edihub/internal/schema"
	"github.com/lefia/edihub/internal/server"
)

// loadRun sends distinct messages from several workers and records which
// were acknowledged with a 2xx and how the others were answered.
type loadRun struct {
	mu       sync.Mutex
	acked    map[string]bool
	statuses map[int]int
	retry    int // 503 answers that carried Retry-After
	sent     atomic.Int64
}

func newLoadRun() *loadRun {
	return &loadRun{acked: map[string]bool{}, statuses: map[int]int{}}
}

// send posts one message; a 503 is retried as SAP would, up to three times.
func (l *loadRun) send(client *http.Client, b *testBundle, docnum string) {
	body := fmt.Sprintf(`{"message_type":"ORDERS05","docnum":%q,"payload":{"n":%q}}`, docnum, docnum)
	for range 4 {
		req, _ := http.NewRequest(http.MethodPost, b.url+"/api/edi-hub/receive-message", stringsReader(body))
		req.Header.Set("Authorization", "Bearer "+b.apiKey)
		req.Header.Set("Content-Type", "application/json")
		l.sent.Add(1)
		resp, err := client.Do(req)
		if err != nil {
			return // the connection went away: not acknowledged
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		l.mu.Lock()
		l.statuses[resp.StatusCode]++
		if resp.StatusCode == http.StatusServiceUnavailable && resp.Header.Get("Retry-After") != "" {
			l.retry++
		}
		if resp.StatusCode == http.StatusCreated || resp.StatusCode == http.StatusOK {
			l.acked[docnum] = true
		}
		l.mu.Unlock()
		if resp.StatusCode != http.StatusServiceUnavailable {
			return
		}
	}
}

// requireExactlyOnce checks that every acknowledged message is stored and
// none is stored twice. It reads through a pool of its own: the server's
// connections may have been cut by the fault under test.
func (l *loadRun) requireExactlyOnce(t *testing.T, b *testBundle) {
	t.Helper()
	b = &testBundle{pool: pgtest.PoolFor(t, b.pool.Config().ConnString()), url: b.url, apiKey: b.apiKey}
	stored := b.count(t, `SELECT count(*) FROM messages`)
	distinct := b.count(t, `SELECT count(DISTINCT docnum) FROM messages`)
	require.Equal(t, distinct, stored, "no message is stored twice")
	have := map[string]bool{}
	for _, d := range pgtest.Column[string](t, b.pool, `SELECT docnum FROM messages`) {
		have[d] = true
	}
	for d := range l.acked {
		require.True(t, have[d], "acknowledged message %s is stored", d)
	}
	t.Logf("sent %d requests, acknowledged %d messages, stored %d, lost 0, duplicated 0; answers %v; 503 with Retry-After: %d",
		l.sent.Load(), len(l.acked), stored, l.statuses, l.retry)
}

// Backends killed during a load run: acknowledged messages survive, nothing
// is stored twice, failures are 503 with Retry-After, never a 500 or a hang,
// and the service recovers by itself.
func TestBackendsKilledUnderLoad(t *testing.T) {
	t.Parallel()
	b := serveReal(t, nil, io.Discard)
	b.messageType(t, "ORDERS05", nil, nil)
	b.messageType(t, "INVOIC02", nil, nil)
	// Every ORDERS05 is owed to two of these three destinations.
	b.destination(t, "http://127.0.0.1:9/all")
	b.destination(t, "http://127.0.0.1:9/orders", "ORDERS05")
	b.destination(t, "http://127.0.0.1:9/invoices", "INVOIC02")
	dbName := b.pool.Config().ConnConfig.Database
	admin := pgtest.PoolFor(t, pgtest.ServerURL())

	ctx, stopKilling := context.WithCancel(context.Background())
	killed := atomic.Int64{}
	killerDone := make(chan struct{})
	go func() {
		defer close(killerDone)
		for ctx.Err() == nil {
			var n int64
			err := admin.QueryRow(ctx, `SELECT count(*) FILTER (WHERE pg_terminate_backend(pid))
				FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()`, dbName).Scan(&n)
			if err == nil {
				killed.Add(n)
			}
			time.Sleep(30 * time.Millisecond)
		}
	}()

	run := newLoadRun()
	client := &http.Client{Timeout: 20 * time.Second, Transport: testClient.Transport}
	var wg sync.WaitGroup
	const workers, perWorker = 8, 40
	for w := range workers {
		wg.Go(func() {
			for i := range perWorker {
				docnum := fmt.Sprintf("%02d%04d", w, i)
				run.send(client, b, docnum)
				// Every message is sent twice, so retransmissions cross the kills too.
				run.send(client, b, docnum)
			}
		})
	}
	wg.Wait()
	stopKilling()
	<-killerDone

	require.Positive(t, killed.Load(), "backends were killed during the run")
	require.Zero(t, run.statuses[http.StatusInternalServerError], "never a 500: %v", run.statuses)
	for status := range run.statuses {
		require.Contains(t, []int{http.StatusCreated, http.StatusOK, http.StatusServiceUnavailable}, status)
	}
	require.Equal(t, run.statuses[http.StatusServiceUnavailable], run.retry, "every 503 carries Retry-After")
	run.requireExactlyOnce(t, b)
	requireDeliveries(t, b, 2)

	requireRecovers(t, b)
}

// requireDeliveries checks that every stored message has its deliveries
// (perMessage of them), each with exactly one River job, and that no
// delivery or job exists without its message: the message, its deliveries
// and their jobs commit together or not at all.
func requireDeliveries(t *testing.T, b *testBundle, perMessage int) {
	t.Helper()
	b = &testBundle{pool: pgtest.PoolFor(t, b.pool.Config().ConnString())}
	require.Zero(t, b.count(t, `SELECT count(*) FROM messages m
		WHERE (SELECT count(*) FROM deliveries d WHERE d.message_id = m.id) <> $1`, perMessage),
		"every message has its deliveries")
	require.Equal(t, perMessage*b.count(t, `SELECT count(*) FROM messages`), b.count(t, `SELECT count(*) FROM deliveries`))
	require.Zero(t, b.count(t, `SELECT count(*) FROM deliveries d WHERE NOT EXISTS (SELECT FROM messages m WHERE m.id = d.message_id)`),
		"no delivery without its message")
	require.Zero(t, b.count(t, `SELECT count(*) FROM deliveries d
		WHERE (SELECT count(*) FROM river_job j WHERE j.kind = 'delivery' AND (j.args->>'delivery_id')::bigint = d.id) <> 1`),
		"every delivery has exactly one job")
	require.Zero(t, b.count(t, `SELECT count(*) FROM river_job j
		WHERE NOT EXISTS (SELECT FROM deliveries d WHERE d.id = (j.args->>'delivery_id')::bigint)`),
		"no job without its delivery")
}

// Shutdown under load: requests in flight finish, new ones are refused, Serve
// returns cleanly, and no acknowledged message is missing.
func TestGracefulShutdownUnderLoad(t *testing.T) {
	t.Parallel()
	b, shutdown, served := startServe(t, nil, io.Discard)
	b.messageType(t, "ORDERS05", nil, nil)
	addr := strings.TrimPrefix(b.url, "http://")

	run := newLoadRun()
	var wg sync.WaitGroup
	for w := range 16 {
		wg.Go(func() {
			// A fresh connection per request, so that requests keep
			// arriving while the listener closes.
			client := &http.Client{Timeout: 20 * time.Second, Transport: &http.Transport{DisableKeepAlives: true}}
			for i := 0; ; i++ {
				run.send(client, b, fmt.Sprintf("%02d%05d", w, i))
				conn, err := net.DialTimeout("tcp", addr, time.Second)
				if err != nil {
					return // the server no longer accepts connections
				}
				_ = conn.Close()
			}
		})
	}
	time.Sleep(500 * time.Millisecond)
	shutdown()
	select {
	case err := <-served:
		require.NoError(t, err, "Serve returns cleanly after finishing in-flight requests")
	case <-time.After(30 * time.Second):
		t.Fatal("shutdown did not finish")
	}
	wg.Wait()

	_, err := net.DialTimeout("tcp", addr, time.Second)
	require.Error(t, err, "new connections are refused after shutdown")
	require.Zero(t, run.statuses[http.StatusInternalServerError])
	require.Positive(t, len(run.acked))
	run.requireExactlyOnce(t, b)
}

// The database server restarts in the middle of a load run: acknowledged
// messages survive, nothing is stored twice, failures are 503, and the
// service recovers by itself once the database is back.
func TestDatabaseRestartUnderLoad(t *testing.T) {
	t.Parallel()
	cluster := pgtest.NewCluster(t)
	pool := pgtest.PoolFor(t, cluster.URL())
	_, err := schema.Migrate(context.Background(), pool)
	require.NoError(t, err)
	cfg, err := config.Load(func(string) string { return "" })
	require.NoError(t, err)
	srv := httptest.NewServer(server.New(cfg, pool, slog.New(slog.NewTextHandler(io.Discard, nil))).Handler())
	t.Cleanup(srv.Close)
	b := provisionBundle(t, pool, srv.URL)
	b.messageType(t, "ORDERS05", nil, nil)

	run := newLoadRun()
	client := &http.Client{Timeout: 20 * time.Second, Transport: testClient.Transport}
	var wg sync.WaitGroup
	for w := range 8 {
		wg.Go(func() {
			for i := range 60 {
				run.send(client, b, fmt.Sprintf("%02d%04d", w, i))
				time.Sleep(5 * time.Millisecond)
			}
		})
	}
	time.Sleep(300 * time.Millisecond)
	cluster.Restart()
	wg.Wait()

	require.Zero(t, run.statuses[http.StatusInternalServerError], "never a 500: %v", run.statuses)
	require.Equal(t, run.statuses[http.StatusServiceUnavailable], run.retry, "every 503 carries Retry-After")
	run.requireExactlyOnce(t, b)
	requireRecovers(t, b)
}

// requireRecovers checks that the server stores a new message again within
// a few seconds of a fault, without anyone restarting it. Connections the
// fault cut are found dead and replaced by the pool on the way.
func requireRecovers(t *testing.T, b *testBundle) {
	t.Helper()
	require.Eventually(t, func() bool {
		return b.post(t, []byte(`{"message_type":"ORDERS05","docnum":"after","payload":{}}`)).status == http.StatusCreated
	}, 10*time.Second, 100*time.Millisecond, "the server stores messages again by itself")
}

// A database that refuses connections is unavailable however it refuses: a
// FATAL error at connect time (too many clients, shutting down, starting up,
// connections not allowed) is a 503 with Retry-After, like /readyz's 503,
// never a 500. Each refusal comes from a stand-in server speaking the
// PostgreSQL protocol, since a shared server cannot be put into these states.
func TestDatabaseRefusingConnectionsIs503(t *testing.T) {
	t.Parallel()
	cfg, err := config.Load(func(string) string { return "" })
	require.NoError(t, err)
	for _, sqlstate := range []string{"53300", "57P01", "57P03", "55000"} {
		t.Run(sqlstate, func(t *testing.T) {
			t.Parallel()
			pool := pgtest.PoolFor(t, pgtest.RefusingServerURL(t, sqlstate))
			srv := httptest.NewServer(server.New(cfg, pool, slog.New(slog.NewTextHandler(io.Discard, nil))).Handler())
			t.Cleanup(srv.Close)
			b := &testBundle{url: srv.URL, apiKey: "edh_any"}
			requireUnavailable(t, b)
		})
	}
}

// A real database with ALLOW_CONNECTIONS false refuses every new
// connection with FATAL 55000: receive-message answers 503 with
// Retry-After, as /readyz does, and stores again once connections are
// allowed.
func TestDatabaseNotAllowingConnectionsIs503(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.messageType(t, "ORDERS05", nil, nil)
	name := b.pool.Config().ConnConfig.Database
	admin := pgtest.PoolFor(t, pgtest.ServerURL())
	allow := func(allowed bool) {
		_, err := admin.Exec(context.Background(), fmt.Sprintf("ALTER DATABASE %s ALLOW_CONNECTIONS %t",
			pgx.Identifier{name}.Sanitize(), allowed))
		require.NoError(t, err)
	}
	allow(false)
	t.Cleanup(func() { allow(true) })
	_, err := admin.Exec(context.Background(),
		`SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()`, name)
	require.NoError(t, err)

	requireUnavailable(t, b)
	ready := do(t, http.MethodGet, b.url+"/readyz", nil, nil)
	require.Equal(t, http.StatusServiceUnavailable, ready.status)

	allow(true)
	requireRecovers(t, b)
}

// requireUnavailable posts a message and requires the answer of an
// unreachable database.
func requireUnavailable(t *testing.T, b *testBundle) {
	t.Helper()
	resp := b.post(t, []byte(`{"message_type":"ORDERS05","docnum":"1","payload":{}}`))
	require.Equal(t, http.StatusServiceUnavailable, resp.status, "%s", resp.body)
	require.Equal(t, "database-unavailable", resp.json(t)["type"])
	require.NotEmpty(t, resp.header.Get("Retry-After"))
}
