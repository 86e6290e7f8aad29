package server_test

import (
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/lefia/edihub/internal/config"
	"github.com/lefia/edihub/internal/pgtest"
	"github.com/lefia/edihub/internal/server"
)

// Replicas share nothing but PostgreSQL: two servers, each with its own
// pool, receiving the same documents at once still store each one once.
func TestTwoReplicasKeepExactlyOnce(t *testing.T) {
	t.Parallel()
	databaseURL := pgtest.URL(t)
	cfg, err := config.Load(func(string) string { return "" })
	require.NoError(t, err)
	replica := func() string {
		srv := httptest.NewServer(server.New(cfg, pgtest.PoolFor(t, databaseURL),
			slog.New(slog.NewTextHandler(io.Discard, nil))).Handler())
		t.Cleanup(srv.Close)
		return srv.URL
	}
	a := provisionBundle(t, pgtest.PoolFor(t, databaseURL), replica())
	b := &testBundle{pool: a.pool, url: replica(), apiKey: a.apiKey}
	a.messageType(t, "ORDERS05", []string{"*.IDOC.E1EDK01.BELNR"}, nil)

	byFingerprint := envelopeFor(t, "ORDERS05", "orders05.json")
	byKey := envelopeFor(t, "ORDERS05", "invoic02.json")
	var wg sync.WaitGroup
	statuses := make(chan int, 4*raceSize)
	for i := range raceSize {
		target := a
		if i%2 == 1 {
			target = b
		}
		wg.Go(func() { statuses <- target.post(t, byFingerprint).status })
		wg.Go(func() { statuses <- target.post(t, byKey, "Idempotency-Key", "replicas-1").status })
	}
	wg.Wait()
	close(statuses)
	created := 0
	for s := range statuses {
		require.Contains(t, []int{http.StatusCreated, http.StatusOK}, s)
		if s == http.StatusCreated {
			created++
		}
	}
	require.Equal(t, 2, created, "one message per document across both replicas")
	require.Equal(t, 2, a.messages(t))
	require.Equal(t, 2*(raceSize-1), a.blockedEvents(t))
}
