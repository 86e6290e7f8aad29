package server_test

import (
	"log/slog"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strconv"
	"strings"
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

// observed is a server whose metrics and JSON log lines the test reads.
type observed struct {
	*testBundle
	metrics *metrics.Metrics
	logs    *syncBuffer
}

// observedServer starts a server configured by vars that counts into
// metrics and logs into a buffer the test reads.
func observedServer(t *testing.T, vars map[string]string) *observed {
	t.Helper()
	pool := pgtest.Pool(t)
	cfg, err := config.Load(func(k string) string { return vars[k] })
	require.NoError(t, err)
	o := &observed{metrics: metrics.New(pool), logs: &syncBuffer{}}
	srv := httptest.NewServer(server.New(cfg, pool, slog.New(slog.NewJSONHandler(o.logs, nil)), server.WithMetrics(o.metrics)).Handler())
	t.Cleanup(srv.Close)
	o.testBundle = provisionBundle(t, pool, srv.URL)
	return o
}

// scrape returns the metrics as Prometheus would read them.
func (o *observed) scrape() string {
	rec := httptest.NewRecorder()
	o.metrics.Handler().ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/metrics", nil))
	return rec.Body.String()
}

// ingestSeries names one series of edihub_ingest_requests_total.
func ingestSeries(messageType, outcome, reason, tenant, env string) string {
	return `edihub_ingest_requests_total{endpoint="receive-message",environment_id="` + env +
		`",message_type="` + messageType + `",outcome="` + outcome + `",reason="` + reason + `",tenant_id="` + tenant + `"}`
}

func TestIngestMetricsAndLogs(t *testing.T) {
	t.Parallel()
	o := observedServer(t, nil)
	b, pool, logs := o.testBundle, o.pool, o.logs
	b.messageType(t, "ORDERS05", []string{"*.IDOC.E1EDK01.BELNR"}, nil)

	body := envelopeFor(t, "ORDERS05", "orders05.json")
	require.Equal(t, http.StatusCreated, b.post(t, body).status)
	require.Equal(t, http.StatusOK, b.post(t, body).status)
	require.Equal(t, http.StatusCreated, b.post(t, body, "Idempotency-Key", "k").status)
	require.Equal(t, http.StatusOK, b.post(t, body, "Idempotency-Key", "k").status)
	require.Equal(t, http.StatusUnprocessableEntity, b.post(t, []byte(`{"message_type":"NOPE","payload":{}}`)).status)
	wrong := &testBundle{url: b.url, apiKey: "edh_wrong"}
	require.Equal(t, http.StatusUnauthorized, wrong.post(t, body).status)

	text := o.scrape()

	var tenant, env string
	require.NoError(t, pool.QueryRow(t.Context(), `SELECT tenant_id::text, id::text FROM environments`).Scan(&tenant, &env))
	series := ingestSeries
	require.Equal(t, 2.0, metricValue(t, text, series("ORDERS05", "accepted", "", tenant, env)))
	require.Equal(t, 1.0, metricValue(t, text, series("ORDERS05", "duplicate_fingerprint", "", tenant, env)))
	require.Equal(t, 1.0, metricValue(t, text, series("ORDERS05", "duplicate_key", "", tenant, env)))
	require.Equal(t, 1.0, metricValue(t, text, series("unknown", "rejected", "unknown-message-type", tenant, env)))
	require.Equal(t, 1.0, metricValue(t, text, series("", "rejected", "unauthorized", "", "")))
	require.Equal(t, 2.0, metricValue(t, text,
		`edihub_http_request_duration_seconds_count{method="POST",route="/api/edi-hub/receive-message",status="200"}`))
	require.Equal(t, 2.0, metricValue(t, text,
		`edihub_http_request_duration_seconds_count{method="POST",route="/api/edi-hub/receive-message",status="201"}`))
	require.Equal(t, 1.0, metricValue(t, text,
		`edihub_http_request_duration_seconds_count{method="POST",route="/api/edi-hub/receive-message",status="401"}`))
	require.Positive(t, metricValue(t, text, "edihub_db_pool_max_connections"))

	// An ingest request's one log line names tenant, message and outcome, then the request.
	require.Regexp(t, `"msg":"ingest","tenant_id":`+tenant+`,"environment_id":`+env+
		`,"message_type":"ORDERS05","message_id":\d+,"outcome":"duplicate_fingerprint","reason":"","messages":1,`+
		`"method":"POST","uri":"/api/edi-hub/receive-message","status":200,"latency":\d+,"request_id":"\w+"`, logs.String())
	require.Regexp(t, `"level":"INFO","msg":"ingest","tenant_id":0,"environment_id":0,"message_type":"","message_id":0,`+
		`"outcome":"rejected","reason":"[^"]*unauthorized","messages":0,"method":"POST".*"status":401`, logs.String())
	require.Equal(t, 6, strings.Count(logs.String(), `"msg":"ingest"`), "one line for each of the six requests")
	require.NotContains(t, logs.String(), `"msg":"request"`)
	require.NotContains(t, logs.String(), b.apiKey)
}

// A packet or a batch counts each message it carries under that message's
// own outcome and type, and the request once, under its messages' outcome
// and type when they share one and "mixed" when they do not.
func TestIngestMetricsPerMessage(t *testing.T) {
	t.Parallel()
	o := observedServer(t, nil)
	b := o.testBundle
	b.messageType(t, "ORDERS05", []string{"*.IDOC.E1EDK01.BELNR"}, nil)
	b.messageType(t, "INVOIC02", nil, nil)
	packet := readFile(t, "orders05_packet.xml") // three IDocs of one order: its second and third repeat the first's BELNR

	require.Len(t, packetResults(t, b.postXML(t, packet, "application/x-sap.idoc", "")), 3)                           // 1 accepted, 2 duplicates
	require.Len(t, packetResults(t, b.postXML(t, packet, "application/x-sap.idoc", "")), 3)                           // 3 duplicates
	require.Len(t, packetResults(t, b.postXML(t, packet, "application/x-sap.idoc", "", "Idempotency-Key", "p-1")), 3) // 3 accepted
	require.Len(t, packetResults(t, b.postXML(t, packet, "application/x-sap.idoc", "", "Idempotency-Key", "p-1")), 3) // 3 replays
	require.Len(t, packetResults(t, b.postBatch(t, batchOf(t, [][]byte{envelopeFor(t, "INVOIC02", "invoic02.json"),
		envelopeFor(t, "ORDERS05", "orders05.json")}))), 2) // 1 accepted, 1 duplicate of the first packet's first IDoc
	text := o.scrape()

	var tenant, env string
	require.NoError(t, b.pool.QueryRow(t.Context(), `SELECT tenant_id::text, id::text FROM environments`).Scan(&tenant, &env))
	messages := func(endpoint, messageType, outcome string) float64 {
		return metricValue(t, text, `edihub_ingest_messages_total{endpoint="`+endpoint+`",environment_id="`+env+
			`",message_type="`+messageType+`",outcome="`+outcome+`",tenant_id="`+tenant+`"}`)
	}
	require.Equal(t, 4.0, messages("receive-message", "ORDERS05", "accepted"))
	require.Equal(t, 5.0, messages("receive-message", "ORDERS05", "duplicate_fingerprint"))
	require.Equal(t, 3.0, messages("receive-message", "ORDERS05", "duplicate_key"))
	require.Equal(t, 1.0, messages("receive-messages", "INVOIC02", "accepted"))
	require.Equal(t, 1.0, messages("receive-messages", "ORDERS05", "duplicate_fingerprint"))
	require.NotContains(t, text, `edihub_ingest_messages_total{endpoint="receive-messages",environment_id="`+env+`",message_type="INVOIC02",outcome="duplicate`)

	requests := func(endpoint, messageType, outcome string) float64 {
		return metricValue(t, text, `edihub_ingest_requests_total{endpoint="`+endpoint+`",environment_id="`+env+
			`",message_type="`+messageType+`",outcome="`+outcome+`",reason="",tenant_id="`+tenant+`"}`)
	}
	require.Equal(t, 1.0, requests("receive-message", "ORDERS05", "mixed"))
	require.Equal(t, 1.0, requests("receive-message", "ORDERS05", "duplicate_fingerprint"))
	require.Equal(t, 1.0, requests("receive-message", "ORDERS05", "accepted"))
	require.Equal(t, 1.0, requests("receive-message", "ORDERS05", "duplicate_key"))
	require.Equal(t, 1.0, requests("receive-messages", "mixed", "mixed"))
	require.Regexp(t, `"msg":"ingest","tenant_id":`+tenant+`,"environment_id":`+env+
		`,"message_type":"mixed","message_id":0,"outcome":"mixed","reason":"","messages":2,"method":"POST"`, o.logs.String())
}
