package server_test

import (
	"bytes"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"

	"github.com/lefia/edihub/internal/config"
	"github.com/lefia/edihub/internal/pgtest"
	"github.com/lefia/edihub/internal/server"
	"github.com/lefia/edihub/internal/testfactory"
)

// testBundle is a running server on its own database with one tenant,
// environment and API key.
type testBundle struct {
	pool   *pgxpool.Pool
	url    string
	apiKey string
	tenant string
}

func setup(t *testing.T, opts ...server.Option) *testBundle {
	t.Helper()
	pool := pgtest.Pool(t)
	cfg, err := config.Load(func(string) string { return "" })
	require.NoError(t, err)
	return setupWith(t, pool, cfg, opts...)
}

func setupWith(t *testing.T, pool *pgxpool.Pool, cfg config.Config, opts ...server.Option) *testBundle {
	t.Helper()
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	srv := httptest.NewServer(server.New(cfg, pool, log, opts...).Handler())
	t.Cleanup(srv.Close)
	return provisionBundle(t, pool, srv.URL)
}

// provisionBundle creates the bundle's tenant, environment and API key for a
// server already answering at url.
func provisionBundle(t *testing.T, pool *pgxpool.Pool, url string) *testBundle {
	t.Helper()
	tenant, _ := testfactory.TenantWithEnvironment(t, pool, "acme")
	key := testfactory.APIKey(t, pool, nil)
	return &testBundle{pool: pool, url: url, apiKey: key, tenant: tenant.Slug}
}

// messageType creates a message type in the bundle's tenant.
func (b *testBundle) messageType(t *testing.T, code string, fields []string, windowHours *int) int64 {
	t.Helper()
	return testfactory.MessageType(t, b.pool, &testfactory.MessageTypeOpts{
		Tenant: b.tenant, Code: code, Fields: fields, WindowHours: windowHours,
	}).ID
}

// destination creates a destination in the bundle's production
// environment for the given message types (none: every type).
func (b *testBundle) destination(t *testing.T, url string, types ...string) int64 {
	t.Helper()
	id, _ := testfactory.Destination(t, b.pool, testfactory.DestinationOpts{Tenant: b.tenant, URL: url, MessageTypes: types})
	return id
}

// response is an answer with its body read.
type response struct {
	status int
	header http.Header
	body   []byte
}

func (r response) json(t *testing.T) map[string]any {
	t.Helper()
	var m map[string]any
	require.NoError(t, json.Unmarshal(r.body, &m), "body: %s", r.body)
	return m
}

// post sends a receive-message request with the bundle's API key.
func (b *testBundle) post(t *testing.T, body []byte, headers ...string) response {
	t.Helper()
	return b.postTo(t, "/api/edi-hub/receive-message", body, headers...)
}

// postTo sends JSON to path with the bundle's API key; headers, in pairs of
// name and value, are added or replace the defaults.
func (b *testBundle) postTo(t *testing.T, path string, body []byte, headers ...string) response {
	t.Helper()
	h := http.Header{"Authorization": {"Bearer " + b.apiKey}, "Content-Type": {"application/json"}}
	for i := 0; i+1 < len(headers); i += 2 {
		h.Set(headers[i], headers[i+1])
	}
	return do(t, http.MethodPost, b.url+path, h, body)
}

// testClient sends the tests' requests over a transport of their own:
// closing an httptest server closes http.DefaultTransport's idle
// connections, and a parallel test's POST that had just picked one up then
// failed with "CloseIdleConnections called".
var testClient = &http.Client{Transport: http.DefaultTransport.(*http.Transport).Clone()}

func do(t *testing.T, method, url string, h http.Header, body []byte) response {
	t.Helper()
	req, err := http.NewRequest(method, url, bytes.NewReader(body))
	require.NoError(t, err)
	for k, v := range h {
		req.Header[k] = v
	}
	client := &http.Client{Timeout: 30 * time.Second, Transport: testClient.Transport}
	resp, err := client.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	requireMatchesOpenAPI(t, req, resp, raw)
	return response{status: resp.StatusCode, header: resp.Header, body: raw}
}

// envelopeFor wraps a sample payload file in a receive-message body.
func envelopeFor(t *testing.T, messageType, sample string) []byte {
	t.Helper()
	payload := readFile(t, sample)
	body, err := json.Marshal(map[string]any{"message_type": messageType, "payload": json.RawMessage(payload)})
	require.NoError(t, err)
	return body
}

func (b *testBundle) count(t *testing.T, query string, args ...any) int {
	t.Helper()
	return pgtest.Count(t, b.pool, query, args...)
}

func (b *testBundle) messages(t *testing.T) int {
	return b.count(t, `SELECT count(*) FROM messages`)
}

func (b *testBundle) blockedEvents(t *testing.T) int {
	return b.count(t, `SELECT count(*) FROM audit_events WHERE action = 'message.duplicate_blocked'`)
}

func ptr[T any](v T) *T { return &v }

func readFile(t *testing.T, name string) []byte {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join("testdata", name))
	require.NoError(t, err)
	return raw
}

func stringsReader(s string) io.Reader { return bytes.NewReader([]byte(s)) }
