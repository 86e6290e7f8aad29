package server_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/lefia/edihub/internal/config"
	"github.com/lefia/edihub/internal/delivery"
	"github.com/lefia/edihub/internal/egress"
	"github.com/lefia/edihub/internal/pgtest"
	"github.com/lefia/edihub/internal/testfactory"
)

// deliverySite is a running server with delivery workers. Tenant acme has
// a destination and three ORDERS05 messages, tenant globex a destination
// and one; every delivery failed, because the receiver answered 502 until
// up is set.
type deliverySite struct {
	*testBundle
	up             atomic.Bool
	received       atomic.Int64 // requests the receiver answered with 200
	receiverURL    string
	acmeDest       int64
	messages       []int64 // acme's
	globexDest     int64
	globexMessage  int64
	globexDelivery int64
	globexURL      string // where globex's destination sends
}

func newDeliverySite(t *testing.T) *deliverySite {
	t.Helper()
	cfg, err := config.Load(func(string) string { return "" })
	require.NoError(t, err)
	// The jobs' attempts are set when ingest writes them.
	cfg.Delivery.MaxAttempts = 2
	site := &deliverySite{testBundle: setupWith(t, pgtest.Pool(t), cfg)}
	receiver := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		if !site.up.Load() {
			w.WriteHeader(http.StatusBadGateway)
			_, _ = io.WriteString(w, `{"error":"the ERP is down for maintenance"}`)
			return
		}
		site.received.Add(1)
		_, _ = io.WriteString(w, "thanks")
	}))
	t.Cleanup(receiver.Close)
	site.receiverURL = receiver.URL

	site.messageType(t, "ORDERS05", []string{"n"}, nil)
	site.acmeDest = site.destination(t, receiver.URL+"/acme")
	for i := range 3 {
		site.messages = append(site.messages, site.postMessage(t, site.apiKey, i))
	}

	testfactory.TenantWithEnvironment(t, site.pool, "globex")
	otherKey := testfactory.APIKey(t, site.pool, &testfactory.APIKeyOpts{Tenant: "globex"})
	testfactory.MessageType(t, site.pool, &testfactory.MessageTypeOpts{Tenant: "globex", Fields: []string{"n"}})
	site.globexURL = receiver.URL + "/globex"
	site.globexDest, _ = testfactory.Destination(t, site.pool, testfactory.DestinationOpts{Tenant: "globex", URL: site.globexURL})
	site.globexMessage = site.postMessage(t, otherKey, 0)
	require.NoError(t, site.pool.QueryRow(context.Background(),
		`SELECT id FROM deliveries WHERE message_id = $1`, site.globexMessage).Scan(&site.globexDelivery))

	site.runWorkers(t)
	site.waitSettled(t)
	require.Equal(t, 4, site.count(t, `SELECT count(*) FROM deliveries WHERE status = 'failed'`))
	return site
}

// postMessage receives ORDERS05 number n with apiKey and returns its id.
func (site *deliverySite) postMessage(t *testing.T, apiKey string, n int) int64 {
	t.Helper()
	h := http.Header{"Authorization": {"Bearer " + apiKey}, "Content-Type": {"application/json"}}
	body := fmt.Sprintf(`{"message_type":"ORDERS05","docnum":"450000%d","payload":{"n":"%d"}}`, n, n)
	resp := do(t, http.MethodPost, site.url+"/api/edi-hub/receive-message", h, []byte(body))
	require.Equal(t, http.StatusCreated, resp.status, "%s", resp.body)
	return int64(resp.json(t)["id"].(float64))
}

// runWorkers runs a worker process until the test ends; its receiver is on
// loopback, which its egress policy opens.
func (site *deliverySite) runWorkers(t *testing.T) {
	t.Helper()
	loopback, err := egress.ParsePolicy("127.0.0.0/8")
	require.NoError(t, err)
	cfg := config.Delivery{
		Egress: loopback, Timeout: 5 * time.Second, MaxAttempts: 2, RetryBase: 20 * time.Millisecond,
		SyncInterval: 100 * time.Millisecond,
	}
	runner, err := delivery.NewRunner(site.pool, cfg, 2*time.Second, slog.New(slog.DiscardHandler), nil)
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- runner.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		require.NoError(t, <-done)
	})
}

// waitSettled waits until no delivery is pending.
func (site *deliverySite) waitSettled(t *testing.T) {
	t.Helper()
	require.Eventually(t, func() bool {
		return site.count(t, `SELECT count(*) FROM deliveries WHERE status = 'pending'`) == 0
	}, 30*time.Second, 50*time.Millisecond, "every delivery is made or failed")
}
