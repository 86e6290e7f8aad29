package server_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"

	"github.com/lefia/edihub/internal/config"
	"github.com/lefia/edihub/internal/pgtest"
	"github.com/lefia/edihub/internal/server"
)

// syncBuffer is a log sink that concurrent handlers may write to.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// serveReal runs the server through Serve, as `edihub serve` does, so that
// the production timeouts and header limits apply, and logs into logs. The
// server shuts down cleanly when the test ends.
func serveReal(t *testing.T, vars map[string]string, logs io.Writer) *testBundle {
	t.Helper()
	return serveOn(t, pgtest.Pool(t), vars, logs)
}

// serveOn is serveReal on pool's database, already migrated.
func serveOn(t *testing.T, pool *pgxpool.Pool, vars map[string]string, logs io.Writer) *testBundle {
	t.Helper()
	b, shutdown, served := startServeOn(t, pool, vars, logs)
	t.Cleanup(func() {
		shutdown()
		require.NoError(t, <-served)
	})
	return b
}

// startServe starts Serve on a database of its own and returns the bundle,
// the function that stands for SIGTERM, and where Serve's result arrives.
func startServe(t *testing.T, vars map[string]string, logs io.Writer) (*testBundle, context.CancelFunc, <-chan error) {
	t.Helper()
	return startServeOn(t, pgtest.Pool(t), vars, logs)
}

// startServeOn is startServe on pool's database, already migrated.
func startServeOn(t *testing.T, pool *pgxpool.Pool, vars map[string]string, logs io.Writer) (*testBundle, context.CancelFunc, <-chan error) {
	t.Helper()
	cfg, err := config.Load(func(k string) string { return vars[k] })
	require.NoError(t, err)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	ctx, shutdown := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() {
		served <- server.New(cfg, pool, slog.New(slog.NewJSONHandler(logs, nil))).Serve(ctx, ln)
	}()
	return provisionBundle(t, pool, "http://"+ln.Addr().String()), shutdown, served
}

// Hostile bodies get a clear 4xx, nothing is stored, and the server goes on
// answering normally.
func TestHostileInput(t *testing.T) {
	t.Parallel()
	b := serveReal(t, map[string]string{"MAX_BODY_BYTES": "2000000"}, io.Discard)
	b.messageType(t, "ORDERS05", []string{"E1EDK01.BELNR"}, nil)

	deep := `{"message_type":"ORDERS05","payload":` + strings.Repeat("[", 100000) + strings.Repeat("]", 100000) + `}`
	tests := []struct {
		name, body, problem string
	}{
		{"invalid utf-8", "{\"message_type\":\"ORDERS05\",\"payload\":{\"a\":\"\xc3\x28\"}}", "malformed-json"},
		{"100k levels of nesting", deep, "malformed-json"},
		{"duplicate keys in the envelope", `{"message_type":"ORDERS05","payload":{},"payload":{"a":1}}`, "malformed-json"},
		{"duplicate keys in the payload", `{"message_type":"ORDERS05","payload":{"E1EDK01":{"BELNR":"1","BELNR":"2"}}}`, "invalid-payload"},
		{"number beyond a double", `{"message_type":"ORDERS05","payload":{"amount":1e400}}`, "invalid-payload"},
		{"raw NUL byte", "{\"message_type\":\"ORDERS05\",\"payload\":{\"a\":\"x\x00y\"}}", "malformed-json"},
		{"raw control character", "{\"message_type\":\"ORDERS05\",\"payload\":{\"a\":\"x\x01y\"}}", "malformed-json"},
		{"lone surrogate escape", `{"message_type":"ORDERS05","payload":{"a":"\ud800"}}`, "invalid-payload"},
		{"SQL in the message type", `{"message_type":"ORDERS05'; DROP TABLE messages; --","payload":{}}`, "unknown-message-type"},
		{"trailing garbage", `{"message_type":"ORDERS05","payload":{}} {"x":1}`, "malformed-json"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp := b.post(t, []byte(tt.body))
			require.GreaterOrEqual(t, resp.status, 400, "%s", resp.body)
			require.Less(t, resp.status, 500, "%s", resp.body)
			require.Equal(t, tt.problem, resp.json(t)["type"])
		})
	}
	require.Equal(t, 0, b.messages(t))

	// Escaped NUL and markup are legal JSON: stored as sent, and the table
	// the SQL named is still there.
	odd := `{"message_type":"ORDERS05","docnum":"1'); DELETE FROM messages; --",` +
		`"payload":{"E1EDK01":{"BELNR":"<script>alert(1)</script>"},"note":"a\u0000b"}}`
	resp := b.post(t, []byte(odd), "Idempotency-Key", `'; DROP TABLE idempotency_keys; --`)
	require.Equal(t, http.StatusCreated, resp.status, "%s", resp.body)
	require.Equal(t, "1'); DELETE FROM messages; --", resp.json(t)["docnum"])
	require.Equal(t, http.StatusOK, b.post(t, []byte(odd), "Idempotency-Key", `'; DROP TABLE idempotency_keys; --`).status)
	require.Equal(t, 1, b.messages(t))
}

func TestOversizedHeadersAreRefused(t *testing.T) {
	t.Parallel()
	b := serveReal(t, nil, io.Discard)
	resp := do(t, http.MethodPost, b.url+"/api/edi-hub/receive-message",
		http.Header{"X-Padding": {strings.Repeat("p", 100<<10)}}, []byte(`{}`))
	require.Equal(t, http.StatusRequestHeaderFieldsTooLarge, resp.status)
	require.Equal(t, http.StatusOK, do(t, http.MethodGet, b.url+"/healthz", nil, nil).status)
}

// A client that trickles its body is cut off after REQUEST_TIMEOUT while
// others are served, and its half-sent message is not stored.
func TestSlowClientIsCutOff(t *testing.T) {
	t.Parallel()
	b := serveReal(t, map[string]string{"REQUEST_TIMEOUT": "1s"}, io.Discard)
	b.messageType(t, "ORDERS05", nil, nil)

	conn, err := net.Dial("tcp", strings.TrimPrefix(b.url, "http://"))
	require.NoError(t, err)
	defer func() { _ = conn.Close() }()
	body := `{"message_type":"ORDERS05","docnum":"1","payload":{}}`
	_, err = fmt.Fprintf(conn, "POST /api/edi-hub/receive-message HTTP/1.1\r\nHost: x\r\n"+
		"Authorization: Bearer %s\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n", b.apiKey, len(body))
	require.NoError(t, err)

	started := time.Now()
	cutOff := false
	for i := 0; i < len(body) && time.Since(started) < 5*time.Second; i++ {
		if _, err := conn.Write([]byte{body[i]}); err != nil {
			cutOff = true
			break
		}
		// Meanwhile a well-behaved client is served at once.
		if i == 2 {
			require.Equal(t, http.StatusOK, do(t, http.MethodGet, b.url+"/healthz", nil, nil).status)
		}
		time.Sleep(200 * time.Millisecond)
	}
	if !cutOff {
		// The server may have closed its side without the writes failing
		// yet; then reading shows it.
		require.NoError(t, conn.SetReadDeadline(time.Now().Add(2*time.Second)))
		answer, _ := io.ReadAll(conn)
		require.NotContains(t, string(answer), "201 Created")
	}
	require.Less(t, time.Since(started), 5*time.Second)
	require.Equal(t, 0, b.messages(t))
}

// A client that disconnects in the middle of its body leaves nothing behind.
func TestClientDisconnectMidBody(t *testing.T) {
	t.Parallel()
	b := serveReal(t, nil, io.Discard)
	b.messageType(t, "ORDERS05", nil, nil)
	conn, err := net.Dial("tcp", strings.TrimPrefix(b.url, "http://"))
	require.NoError(t, err)
	_, err = fmt.Fprintf(conn, "POST /api/edi-hub/receive-message HTTP/1.1\r\nHost: x\r\n"+
		"Authorization: Bearer %s\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n"+
		`{"message_type":"ORDERS05","docnum":"1","payload":{"a":`, b.apiKey)
	require.NoError(t, err)
	require.NoError(t, conn.Close())

	require.Equal(t, http.StatusOK, do(t, http.MethodGet, b.url+"/healthz", nil, nil).status)
	require.Equal(t, 0, b.messages(t))
}

// Secrets never reach the logs: a full run with successes, duplicates and
// every kind of failure logs neither API keys nor webhook secrets.
func TestSecretsAreNeverLogged(t *testing.T) {
	t.Parallel()
	logs := &syncBuffer{}
	b := serveReal(t, nil, logs)
	b.messageType(t, "ORDERS05", []string{"*.IDOC.E1EDK01.BELNR"}, nil)
	const secret = "log-scan-secret-0123456789abcdef"
	id := b.integration(t, "ORDERS05", "github", secret)

	body := envelopeFor(t, "ORDERS05", "orders05.json")
	b.post(t, body)
	b.post(t, body)
	b.post(t, body, "Idempotency-Key", "k1")
	b.post(t, []byte(`{"message_type":"NOPE","payload":{}}`))
	b.post(t, []byte(`{`))
	wrong := &testBundle{url: b.url, apiKey: b.apiKey + "x"}
	wrong.post(t, body)
	do(t, http.MethodPost, b.url+"/api/webhook/"+id, http.Header{
		"Content-Type": {"application/json"}, "X-Hub-Signature-256": {"sha256=" + strings.Repeat("0", 64)},
	}, []byte(`{"id":1}`))

	text := logs.String()
	require.Contains(t, text, "/api/edi-hub/receive-message", "the run was logged")
	require.NotContains(t, text, b.apiKey)
	require.NotContains(t, text, secret)
	require.NotContains(t, text, "4500012345", "payloads are not logged")
}

// X-Forwarded-For names the client only when a trusted proxy sent it;
// anyone else could forge the source of an audit event with it.
func TestForwardedForIsBelievedOnlyFromTrustedProxies(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name, trusted, want string
	}{
		{"loopback proxy, the default", "", "203.0.113.7"},
		{"the peer is not a trusted proxy", "10.0.0.0/8", "127.0.0.1"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			b := serveReal(t, map[string]string{"TRUSTED_PROXIES": tt.trusted}, io.Discard)
			b.messageType(t, "ORDERS05", nil, nil)
			body := []byte(`{"message_type":"ORDERS05","docnum":"1","payload":{}}`)
			require.Equal(t, http.StatusCreated, b.post(t, body, "X-Forwarded-For", "203.0.113.7").status)
			require.Equal(t, http.StatusOK, b.post(t, body, "X-Forwarded-For", "203.0.113.7").status)
			var addr, source string
			require.NoError(t, b.pool.QueryRow(context.Background(),
				`SELECT remote_addr FROM messages`).Scan(&addr))
			require.NoError(t, b.pool.QueryRow(context.Background(),
				`SELECT details->'source'->>'remote_addr' FROM audit_events WHERE action = 'message.duplicate_blocked'`).Scan(&source))
			require.Equal(t, tt.want, addr)
			require.Equal(t, tt.want, source)
		})
	}
}
