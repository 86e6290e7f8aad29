package server_test

import (
	"log/slog"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/lefia/edihub/internal/config"
	"github.com/lefia/edihub/internal/metrics"
	"github.com/lefia/edihub/internal/pgtest"
	"github.com/lefia/edihub/internal/server"
)

// metricValue reads one sample from a Prometheus text exposition.
func metricValue(t *testing.T, exposition, series string) float64 {
	t.Helper()
	m := regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(series) + ` (\S+)$`).FindStringSubmatch(exposition)
	require.NotNil(t, m, "series %s not found in:\n%s", series, exposition)
	v, err := strconv.ParseFloat(m[1], 64)
	require.NoError(t, err)
	return v
}

func TestIngestMetricsAndLogs(t *testing.T) {
	t.Parallel()
	pool := pgtest.Pool(t)
	cfg, err := config.Load(func(string) string { return "" })
	require.NoError(t, err)
	m := metrics.New(pool)
	logs := &syncBuffer{}
	srv := httptest.NewServer(server.New(cfg, pool, slog.New(slog.NewJSONHandler(logs, nil)), server.WithMetrics(m)).Handler())
	t.Cleanup(srv.Close)
	b := provisionBundle(t, pool, srv.URL)
	b.messageType(t, "ORDERS05", []string{"*.IDOC.E1EDK01.BELNR"}, nil)

	body := envelopeFor(t, "ORDERS05", "orders05.json")
	require.Equal(t, http.StatusCreated, b.post(t, body).status)
	require.Equal(t, http.StatusOK, b.post(t, body).status)
	require.Equal(t, http.StatusCreated, b.post(t, body, "Idempotency-Key", "k").status)
	require.Equal(t, http.StatusOK, b.post(t, body, "Idempotency-Key", "k").status)
	require.Equal(t, http.StatusUnprocessableEntity, b.post(t, []byte(`{"message_type":"NOPE","payload":{}}`)).status)
	wrong := &testBundle{url: b.url, apiKey: "edh_wrong"}
	require.Equal(t, http.StatusUnauthorized, wrong.post(t, body).status)

	rec := httptest.NewRecorder()
	m.Handler().ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/metrics", nil))
	text := rec.Body.String()

	var tenant, env string
	require.NoError(t, pool.QueryRow(t.Context(), `SELECT tenant_id::text, id::text FROM environments`).Scan(&tenant, &env))
	series := func(messageType, outcome, reason string, tenant, env string) string {
		return `edihub_ingest_requests_total{endpoint="receive-message",environment_id="` + env +
			`",message_type="` + messageType + `",outcome="` + outcome + `",reason="` + reason + `",tenant_id="` + tenant + `"}`
	}
	require.Equal(t, 2.0, metricValue(t, text, series("ORDERS05", "accepted", "", tenant, env)))
	require.Equal(t, 1.0, metricValue(t, text, series("ORDERS05", "duplicate_fingerprint", "", tenant, env)))
	require.Equal(t, 1.0, metricValue(t, text, series("ORDERS05", "duplicate_key", "", tenant, env)))
	require.Equal(t, 1.0, metricValue(t, text, series("NOPE", "rejected", "unknown-message-type", tenant, env)))
	require.Equal(t, 1.0, metricValue(t, text, series("", "rejected", "unauthorized", "", "")))
	require.Equal(t, 2.0, metricValue(t, text,
		`edihub_http_request_duration_seconds_count{method="POST",route="/api/edi-hub/receive-message",status="200"}`))
	require.Equal(t, 2.0, metricValue(t, text,
		`edihub_http_request_duration_seconds_count{method="POST",route="/api/edi-hub/receive-message",status="201"}`))
	require.Equal(t, 1.0, metricValue(t, text,
		`edihub_http_request_duration_seconds_count{method="POST",route="/api/edi-hub/receive-message",status="401"}`))
	require.Positive(t, metricValue(t, text, "edihub_db_pool_max_connections"))

	// Ingest log lines name tenant, message and outcome; request ids tie them to the request line.
	require.Regexp(t, `"msg":"ingest","tenant_id":`+tenant+`,"environment_id":`+env+
		`,"message_type":"ORDERS05","message_id":\d+,"outcome":"duplicate_fingerprint","reason":"","request_id":"\w+"`, logs.String())
	require.NotContains(t, logs.String(), b.apiKey)
}
