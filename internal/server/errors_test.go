package server_test

import (
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/lefia/edihub/internal/config"
	"github.com/lefia/edihub/internal/pgtest"
	"github.com/lefia/edihub/internal/server"
)

func TestReceiveErrors(t *testing.T) {
	t.Parallel()
	pool := pgtest.Pool(t)
	cfg, err := config.Load(func(k string) string {
		return map[string]string{"MAX_BODY_BYTES": "2048"}[k]
	})
	require.NoError(t, err)
	b := setupWith(t, pool, cfg)
	b.messageType(t, "ORDERS05", nil, nil)
	valid := `{"message_type":"ORDERS05","docnum":"1","payload":{}}`
	auth := "Bearer " + b.apiKey

	tests := []struct {
		name     string
		headers  http.Header
		body     string
		status   int
		problem  string
		detailIn string
	}{
		{"no api key", http.Header{"Content-Type": {"application/json"}}, valid, 401, "unauthorized", "API key"},
		{"wrong api key", http.Header{"Authorization": {"Bearer edh_wrong"}, "Content-Type": {"application/json"}}, valid, 401, "unauthorized", "API key"},
		{"basic auth", http.Header{"Authorization": {"Basic YTpi"}, "Content-Type": {"application/json"}}, valid, 401, "unauthorized", "Bearer"},
		{"not json content type", http.Header{"Authorization": {auth}, "Content-Type": {"text/plain"}}, valid, 415, "unsupported-media-type", "application/json"},
		{"no content type", http.Header{"Authorization": {auth}}, valid, 415, "unsupported-media-type", "application/json"},
		{"malformed json", http.Header{"Authorization": {auth}, "Content-Type": {"application/json"}}, `{"message_type":`, 400, "malformed-json", "not valid JSON"},
		{"missing message type", http.Header{"Authorization": {auth}, "Content-Type": {"application/json"}}, `{"payload":{}}`, 400, "missing-field", "message_type"},
		{"missing payload", http.Header{"Authorization": {auth}, "Content-Type": {"application/json"}}, `{"message_type":"ORDERS05"}`, 400, "missing-field", "payload"},
		{"unknown message type", http.Header{"Authorization": {auth}, "Content-Type": {"application/json"}}, `{"message_type":"NOPE","payload":{}}`, 422, "unknown-message-type", "NOPE"},
		{"empty idempotency key", http.Header{"Authorization": {auth}, "Content-Type": {"application/json"}, "Idempotency-Key": {""}}, valid, 400, "invalid-idempotency-key", "1 to 255"},
		{"long idempotency key", http.Header{"Authorization": {auth}, "Content-Type": {"application/json"}, "Idempotency-Key": {strings.Repeat("k", 256)}}, valid, 400, "invalid-idempotency-key", "1 to 255"},
		{"control character in key", http.Header{"Authorization": {auth}, "Content-Type": {"application/json"}, "Idempotency-Key": {"a\tb"}}, valid, 400, "invalid-idempotency-key", "printable ASCII"},
		{"non-ascii key", http.Header{"Authorization": {auth}, "Content-Type": {"application/json"}, "Idempotency-Key": {"schlüssel"}}, valid, 400, "invalid-idempotency-key", "printable ASCII"},
		{"two keys", http.Header{"Authorization": {auth}, "Content-Type": {"application/json"}, "Idempotency-Key": {"a", "b"}}, valid, 400, "invalid-idempotency-key", "at most one"},
		{"body over the limit", http.Header{"Authorization": {auth}, "Content-Type": {"application/json"}},
			`{"message_type":"ORDERS05","payload":"` + strings.Repeat("x", 4096) + `"}`, 413, "payload-too-large", "2048"},
		{"duplicate keys in payload", http.Header{"Authorization": {auth}, "Content-Type": {"application/json"}},
			`{"message_type":"ORDERS05","payload":{"a":1,"a":2}}`, 400, "invalid-payload", "canonicalised"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp := do(t, http.MethodPost, b.url+"/api/edi-hub/receive-message", tt.headers, []byte(tt.body))
			require.Equal(t, tt.status, resp.status, "%s", resp.body)
			require.Equal(t, "application/problem+json", resp.header.Get("Content-Type"))
			got := resp.json(t)
			require.Equal(t, tt.problem, got["type"])
			require.Equal(t, float64(tt.status), got["status"])
			require.Contains(t, got["detail"], tt.detailIn)
			require.Equal(t, "urn:edihub:request:"+resp.header.Get("X-Request-Id"), got["instance"])
			require.Equal(t, false, got["retryable"], "the same request gets the same refusal")
			if keys := tt.headers.Values("Idempotency-Key"); len(keys) == 1 && keys[0] != "" {
				require.Equal(t, keys[0], got["idempotency_key"], "the refused key is named")
			} else {
				require.NotContains(t, got, "idempotency_key", "no single key to name")
			}
		})
	}
	require.Equal(t, 0, b.messages(t), "no failed request stores anything")
	require.Equal(t, "Bearer realm=\"edihub\"",
		do(t, http.MethodPost, b.url+"/api/edi-hub/receive-message", nil, nil).header.Get("WWW-Authenticate"))
}

// A problem's instance names the request with the id of its X-Request-Id
// header and of the server's log lines, escaped when a client chose an id
// that is not URI-safe.
func TestProblemInstanceNamesTheRequest(t *testing.T) {
	t.Parallel()
	logs := &syncBuffer{}
	pool := pgtest.PoolFor(t, "postgres://postgres@127.0.0.1:1/edihub?sslmode=disable&connect_timeout=2")
	cfg, err := config.Load(func(string) string { return "" })
	require.NoError(t, err)
	srv := httptest.NewServer(server.New(cfg, pool, slog.New(slog.NewJSONHandler(logs, nil))).Handler())
	t.Cleanup(srv.Close)
	send := func(requestID string) response {
		h := http.Header{"Authorization": {"Bearer edh_x"}, "Content-Type": {"application/json"}}
		if requestID != "" {
			h.Set("X-Request-Id", requestID)
		}
		return do(t, http.MethodPost, srv.URL+"/api/edi-hub/receive-message", h, []byte(`{"message_type":"ORDERS05","payload":{}}`))
	}

	resp := send("")
	id := resp.header.Get("X-Request-Id")
	require.NotEmpty(t, id)
	require.Equal(t, "urn:edihub:request:"+id, resp.json(t)["instance"])
	require.Contains(t, logs.String(), `"msg":"database unavailable"`)
	require.Contains(t, logs.String(), `"request_id":"`+id+`"`)

	resp = send("batch#7/a")
	require.Equal(t, "urn:edihub:request:batch%237%2Fa", resp.json(t)["instance"])
}

// A client's X-Request-Id is kept only when it is 1 to 128 printable ASCII
// characters: it goes into the audit events of the request, which are kept
// for a year. Any other is replaced by an id of the server's own, and logged
// apart, cut short, so that the client's report can still be matched.
func TestClientRequestIDsAreBounded(t *testing.T) {
	t.Parallel()
	logs := &syncBuffer{}
	b := serveReal(t, nil, logs)
	b.messageType(t, "ORDERS05", []string{"n"}, nil)
	body := []byte(`{"message_type":"ORDERS05","payload":{"n":"1"}}`)
	require.Equal(t, http.StatusCreated, b.post(t, body).status)

	huge := strings.Repeat("r", 60_000)
	for _, id := range []string{huge, "order 7", "bestellung-ä", strings.Repeat("r", 129)} {
		resp := b.post(t, body, "X-Request-Id", id)
		require.Equal(t, http.StatusOK, resp.status, "%s", resp.body)
		own := resp.header.Get("X-Request-Id")
		require.NotEqual(t, id, own)
		require.Regexp(t, `^[A-Z2-7]{26}$`, own)
		require.Equal(t, 1, b.count(t, `SELECT count(*) FROM audit_events WHERE details->'source'->>'request_id' = $1`, own))
	}
	require.Zero(t, b.count(t, `SELECT count(*) FROM audit_events WHERE length(details::text) > 2000`))
	require.Contains(t, logs.String(), `"client_request_id":"`+huge[:512]+`…(60000 bytes)"`)
	require.Less(t, len(logs.String()), 20_000, "log lines stay small")

	kept := "SAP-" + strings.Repeat("7", 124)
	resp := b.post(t, body, "X-Request-Id", kept)
	require.Equal(t, kept, resp.header.Get("X-Request-Id"))
	require.Equal(t, 1, b.count(t, `SELECT count(*) FROM audit_events WHERE details->'source'->>'request_id' = $1`, kept))
}

func TestUnknownRouteIsAProblem(t *testing.T) {
	t.Parallel()
	b := setup(t)
	resp := do(t, http.MethodGet, b.url+"/api/nothing-here", nil, nil)
	require.Equal(t, http.StatusNotFound, resp.status)
	require.Equal(t, "not-found", resp.json(t)["type"])
}

// When the database cannot be reached, clients get 503 with Retry-After and
// never a 500, so that SAP retries later.
func TestDatabaseUnreachableIs503(t *testing.T) {
	t.Parallel()
	pool := pgtest.PoolFor(t, "postgres://postgres@127.0.0.1:1/edihub?sslmode=disable&connect_timeout=2")
	cfg, err := config.Load(func(string) string { return "" })
	require.NoError(t, err)
	srv := httptest.NewServer(server.New(cfg, pool, slog.New(slog.NewTextHandler(io.Discard, nil))).Handler())
	t.Cleanup(srv.Close)

	resp := do(t, http.MethodPost, srv.URL+"/api/edi-hub/receive-message",
		http.Header{"Authorization": {"Bearer edh_x"}, "Content-Type": {"application/json"}},
		[]byte(`{"message_type":"ORDERS05","payload":{}}`))
	require.Equal(t, http.StatusServiceUnavailable, resp.status, "%s", resp.body)
	require.Equal(t, "5", resp.header.Get("Retry-After"))
	require.Equal(t, "database-unavailable", resp.json(t)["type"])
	require.Equal(t, true, resp.json(t)["retryable"])

	require.Equal(t, http.StatusOK, do(t, http.MethodGet, srv.URL+"/healthz", nil, nil).status)
	require.Equal(t, http.StatusServiceUnavailable, do(t, http.MethodGet, srv.URL+"/readyz", nil, nil).status)
}

func TestReadyWhenMigrated(t *testing.T) {
	t.Parallel()
	b := setup(t)
	resp := do(t, http.MethodGet, b.url+"/readyz", nil, nil)
	require.Equal(t, http.StatusOK, resp.status, "%s", resp.body)
	require.Equal(t, "ready", resp.json(t)["status"])
}

func TestHomePageAndStaticAssets(t *testing.T) {
	t.Parallel()
	b := setup(t)
	resp := do(t, http.MethodGet, b.url+"/", nil, nil)
	require.Equal(t, http.StatusOK, resp.status)
	require.Equal(t, "text/html; charset=UTF-8", resp.header.Get("Content-Type"))
	require.Contains(t, string(resp.body), "<title>Home · edihub</title>")
	require.Contains(t, string(resp.body), "/api/edi-hub/receive-message")
	require.Contains(t, string(resp.body), "POST /api/webhook/&#123;integrationId&#125;")
	require.Contains(t, string(resp.body), `<a href="/api/openapi.yaml">`)
	require.Contains(t, string(resp.body), `<a href="/admin">Admin</a>`, "Admin leads to the dashboard")
	require.Contains(t, string(resp.body), `<a href="/admin"><code>/admin</code></a>`)

	for path, contentType := range map[string]string{
		"/static/edihub.css":          "text/css",
		"/static/vendor/pico.min.css": "text/css",
		"/static/vendor/htmx.min.js":  "javascript",
	} {
		resp := do(t, http.MethodGet, b.url+path, nil, nil)
		require.Equal(t, http.StatusOK, resp.status, path)
		require.Contains(t, resp.header.Get("Content-Type"), contentType, path)
	}
}

// A connection test's GET (SAP's SM59 sends one) on an intake path is
// told that the path takes POST, without credentials and storing nothing,
// so that the test proves the path reaches edihub; a path edihub does not
// have is still 404.
func TestIntakePathsAnswerOtherMethodsWithAllowPost(t *testing.T) {
	t.Parallel()
	b := setup(t)
	for _, path := range []string{"/api/edi-hub/receive-message", "/api/edi-hub/receive-messages",
		"/api/webhook/3f1c2d4e-5a6b-4c7d-8e9f-0a1b2c3d4e5f"} {
		r := do(t, http.MethodGet, b.url+path, nil, nil)
		require.Equal(t, http.StatusMethodNotAllowed, r.status, path)
		require.Equal(t, http.MethodPost, r.header.Get("Allow"), path)
		require.Equal(t, "method-not-allowed", r.json(t)["type"], path)
	}
	r := do(t, http.MethodGet, b.url+"/api/edi-hub/receive-everything", nil, nil)
	require.Equal(t, http.StatusNotFound, r.status)
	require.Zero(t, b.messages(t))
}

// The default log has a line for each request but the pages' static
// files, which every page an admin opens asks for.
func TestStaticFilesStayOutOfTheDefaultLog(t *testing.T) {
	t.Parallel()
	var logs syncBuffer
	b := serveReal(t, nil, &logs)
	require.Equal(t, http.StatusOK, do(t, http.MethodGet, b.url+"/static/edihub.css", nil, nil).status)
	require.Equal(t, http.StatusOK, do(t, http.MethodGet, b.url+"/favicon.ico", nil, nil).status)
	require.Equal(t, http.StatusNotFound, do(t, http.MethodGet, b.url+"/static/no-such-file.css", nil, nil).status)
	require.Equal(t, http.StatusOK, do(t, http.MethodGet, b.url+"/healthz", nil, nil).status)
	require.Eventually(t, func() bool { return strings.Contains(logs.String(), `"uri":"/healthz"`) }, 5*time.Second, 10*time.Millisecond)
	require.NotContains(t, logs.String(), `"uri":"/static/edihub.css"`)
	require.NotContains(t, logs.String(), `"uri":"/favicon.ico"`)
	require.Contains(t, logs.String(), `"uri":"/static/no-such-file.css"`, "a missing file is worth a line")
}
