package server_test

import (
	"bytes"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/lefia/edihub/internal/config"
	"github.com/lefia/edihub/internal/metrics"
	"github.com/lefia/edihub/internal/pgtest"
	"github.com/lefia/edihub/internal/server"
	"github.com/lefia/edihub/internal/testfactory"
)

// BenchmarkUniqueMessageTypes sends 40 receive-message requests, each with
// a message type of its own a megabyte long, and reports how much they grew
// the /metrics exposition (metrics-KiB) and the log (log-KiB).
func BenchmarkUniqueMessageTypes(b *testing.B) {
	pool := pgtest.Pool(b)
	cfg, err := config.Load(func(string) string { return "" })
	require.NoError(b, err)
	m := metrics.New(pool)
	logs := &syncBuffer{}
	srv := httptest.NewServer(server.New(cfg, pool, slog.New(slog.NewJSONHandler(logs, nil)), server.WithMetrics(m)).Handler())
	b.Cleanup(srv.Close)
	testfactory.TenantWithEnvironment(b, pool, "acme")
	key := testfactory.APIKey(b, pool, nil)
	scrape := func() int {
		rec := httptest.NewRecorder()
		m.Handler().ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/metrics", nil))
		return rec.Body.Len()
	}
	var grownMetrics, grownLog float64
	for i := 0; b.Loop(); i++ {
		metricsBefore, logBefore := scrape(), len(logs.String())
		for j := range 40 {
			body := `{"message_type":"` + strings.Repeat("M", 1<<20) + fmt.Sprintf("%d_%d", i, j) + `","payload":{}}`
			req, err := http.NewRequest(http.MethodPost, srv.URL+"/api/edi-hub/receive-message", bytes.NewReader([]byte(body)))
			require.NoError(b, err)
			req.Header.Set("Authorization", "Bearer "+key)
			req.Header.Set("Content-Type", "application/json")
			resp, err := http.DefaultClient.Do(req)
			require.NoError(b, err)
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
		}
		grownMetrics = float64(scrape()-metricsBefore) / 1024
		grownLog = float64(len(logs.String())-logBefore) / 1024
	}
	b.ReportMetric(grownMetrics, "metrics-KiB")
	b.ReportMetric(grownLog, "log-KiB")
}
