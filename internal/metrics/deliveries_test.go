package metrics_test

import (
	"context"
	"net/http/httptest"
	"regexp"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/lefia/edihub/internal/delivery"
	"github.com/lefia/edihub/internal/ingest"
	"github.com/lefia/edihub/internal/messagetype"
	"github.com/lefia/edihub/internal/metrics"
	"github.com/lefia/edihub/internal/pgtest"
	"github.com/lefia/edihub/internal/testfactory"
)

// The queue depth and the age of the oldest pending delivery are read from
// the deliveries every worker process shares; attempts are counted by
// outcome.
func TestDeliveryMetrics(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool := pgtest.Pool(t)
	tenant, env := testfactory.TenantWithEnvironment(t, pool, "acme")
	mt := testfactory.MessageType(t, pool, &testfactory.MessageTypeOpts{Fields: []string{"id"}})
	testfactory.Destination(t, pool, testfactory.DestinationOpts{URL: "http://127.0.0.1:9/a"})
	testfactory.Destination(t, pool, testfactory.DestinationOpts{URL: "http://127.0.0.1:9/b"})
	in := ingest.New(pool, time.Hour, delivery.NewService(pool, 3))
	for i := range 3 {
		_, err := in.Receive(ctx, ingest.Request{
			TenantID: tenant.ID, EnvironmentID: env.ID, MessageType: messagetype.Prepare(mt), Payload: []byte(`{"id":"` + strconv.Itoa(i) + `"}`),
			Source: ingest.Source{Endpoint: ingest.EndpointReceiveMessage, RemoteAddr: "192.0.2.1", Actor: "test"},
		})
		require.NoError(t, err)
	}
	_, err := pool.Exec(ctx, `UPDATE deliveries SET created_at = now() - interval '90 seconds' WHERE id = (SELECT min(id) FROM deliveries)`)
	require.NoError(t, err)
	_, err = pool.Exec(ctx, `UPDATE deliveries SET status = 'delivered' WHERE id = (SELECT max(id) FROM deliveries)`)
	require.NoError(t, err)

	m := metrics.New(pool)
	m.ObserveDelivery(delivery.OutcomeRetry, time.Second)
	m.ObserveDelivery(delivery.OutcomeRetry, time.Second)
	m.ObserveDelivery(delivery.OutcomeDelivered, time.Millisecond)

	rec := httptest.NewRecorder()
	m.Handler().ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	body := rec.Body.String()
	require.Contains(t, body, "edihub_deliveries_pending 5\n", "six deliveries, one made")
	age := regexp.MustCompile(`edihub_delivery_oldest_pending_seconds ([0-9.e+]+)\n`).FindStringSubmatch(body)
	require.NotNil(t, age, body)
	seconds, err := strconv.ParseFloat(age[1], 64)
	require.NoError(t, err)
	require.InDelta(t, 90, seconds, 30)
	require.Contains(t, body, `edihub_delivery_attempts_total{outcome="delivered"} 1`)
	require.Contains(t, body, `edihub_delivery_attempts_total{outcome="retry"} 2`)
}
