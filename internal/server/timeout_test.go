package server_test

import (
	"bytes"
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/lefia/edihub/internal/auth"
)

// lockTable holds an exclusive lock on table until the test ends, so that
// any statement touching it waits: a request that needs it runs past any
// time limit.
func lockTable(t *testing.T, b *testBundle, table string) (release func()) {
	t.Helper()
	tx, err := b.pool.Begin(context.Background())
	require.NoError(t, err)
	_, err = tx.Exec(context.Background(), "LOCK TABLE "+pgx.Identifier{table}.Sanitize()+" IN ACCESS EXCLUSIVE MODE")
	require.NoError(t, err)
	release = func() { _ = tx.Rollback(context.Background()) }
	t.Cleanup(release)
	return release
}

// A request that runs past REQUEST_TIMEOUT is answered as a timeout, with
// its own problem type and without Retry-After; it is logged as a warning
// and counted as timed out, not as an unavailable database.
func TestRequestPastTheTimeLimitIsATimeout(t *testing.T) {
	t.Parallel()
	o := observedServer(t, map[string]string{"REQUEST_TIMEOUT": "300ms"})
	o.messageType(t, "ORDERS05", nil, nil)
	lockTable(t, o.testBundle, "messages")

	resp := o.post(t, []byte(`{"message_type":"ORDERS05","docnum":"1","payload":{}}`))
	require.Equal(t, http.StatusGatewayTimeout, resp.status, "%s", resp.body)
	require.Equal(t, "request-timeout", resp.json(t)["type"])
	require.Contains(t, resp.json(t)["detail"], "300ms")
	require.Empty(t, resp.header.Get("Retry-After"), "a timeout does not invite an immediate retry")

	var tenant, env string
	require.NoError(t, o.pool.QueryRow(t.Context(), `SELECT tenant_id::text, id::text FROM environments`).Scan(&tenant, &env))
	text := o.scrape()
	require.Equal(t, 1.0, metricValue(t, text, ingestSeries("ORDERS05", "timed_out", "request-timeout", tenant, env)))
	require.NotContains(t, text, "database-unavailable")
	require.Equal(t, 1.0, metricValue(t, text,
		`edihub_http_request_duration_seconds_count{method="POST",route="/api/edi-hub/receive-message",status="504"}`))
	logs := o.logs.String()
	require.Contains(t, logs, `"level":"WARN","msg":"request timed out"`)
	require.NotContains(t, logs, `"level":"ERROR"`)
}

// A client that gives up mid-request is its own outcome, whatever it sent
// (one message, a batch, an IDoc-XML packet, a webhook): logged as information,
// counted as client_closed with status 499, never an error or a 500.
func TestClientThatLeavesIsNotAServerError(t *testing.T) {
	t.Parallel()
	envelope := `{"message_type":"ORDERS05","docnum":"1","payload":{"IDOC":{"E1EDK01":{"BELNR":"1"}}}}`
	for _, tc := range []struct {
		name, path, contentType, endpoint string
		body                              []byte
	}{
		{"message", "/api/edi-hub/receive-message", "application/json", "receive-message", []byte(envelope)},
		{"batch", "/api/edi-hub/receive-messages", "application/json", "receive-messages", []byte(`{"messages":[` + envelope + `]}`)},
		{"packet", "/api/edi-hub/receive-message", "application/x-sap.idoc", "receive-message", readFile(t, "orders05_packet.xml")},
		// A webhook of an integration whose scheme is the API key.
		{"webhook", "/api/webhook/:integrationId", "application/json", "webhook", []byte(`{"IDOC":{"E1EDK01":{"BELNR":"1"}}}`)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			o := observedServer(t, nil)
			o.messageType(t, "ORDERS05", []string{"*.IDOC.E1EDK01.BELNR"}, nil)
			url := o.url + tc.path
			if tc.endpoint == "webhook" {
				url = o.url + "/api/webhook/" + o.integration(t, "ORDERS05", "bearer", "")
			}
			lockTable(t, o.testBundle, "messages")

			ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
			defer cancel()
			req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(tc.body))
			require.NoError(t, err)
			req.Header.Set("Authorization", "Bearer "+o.apiKey)
			req.Header.Set("Content-Type", tc.contentType)
			_, err = testClient.Do(req)
			require.ErrorIs(t, err, context.DeadlineExceeded, "the client gave up")

			var tenant, env string
			require.NoError(t, o.pool.QueryRow(t.Context(), `SELECT tenant_id::text, id::text FROM environments`).Scan(&tenant, &env))
			series := strings.Replace(ingestSeries("ORDERS05", "client_closed", "client-closed-request", tenant, env),
				`endpoint="receive-message"`, `endpoint="`+tc.endpoint+`"`, 1)
			require.Eventually(t, func() bool { return strings.Contains(o.scrape(), series) }, 5*time.Second, 20*time.Millisecond,
				"the server notices the departed client")
			text := o.scrape()
			require.Equal(t, 1.0, metricValue(t, text, series))
			require.Equal(t, 1.0, metricValue(t, text,
				`edihub_http_request_duration_seconds_count{method="POST",route="`+tc.path+`",status="499"}`))
			require.NotContains(t, text, `status="500"`)
			require.Eventually(t, func() bool { return strings.Contains(o.logs.String(), `"status":499`) }, 5*time.Second, 20*time.Millisecond)
			logs := o.logs.String()
			require.Contains(t, logs, `"level":"INFO","msg":"client closed the request"`)
			require.NotContains(t, logs, `"level":"ERROR"`)
		})
	}
}

// Admin pages have a time limit of their own, ADMIN_REQUEST_TIMEOUT: a page
// whose query cannot finish is an error page saying so, not a request that
// holds a connection and a goroutine for ever.
func TestAdminPagesHaveATimeLimit(t *testing.T) {
	t.Parallel()
	o := observedServer(t, map[string]string{"ADMIN_REQUEST_TIMEOUT": "3s"})
	o.user(t, "root@example.com", auth.RoleAdmin, "")
	c := o.client(t)
	c.login("root@example.com")
	lockTable(t, o.testBundle, "audit_events")

	start := time.Now()
	resp := c.get("/admin/audit")
	require.Less(t, time.Since(start), 10*time.Second)
	require.Equal(t, http.StatusGatewayTimeout, resp.status, "%s", resp.body)
	require.Contains(t, string(resp.body), "time limit of 3s")
	require.NotContains(t, o.logs.String(), `"level":"ERROR"`)
}
