package loadgen

import (
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// countingServer serves handler and counts the connections made to it.
func countingServer(t *testing.T, handler http.HandlerFunc) (*httptest.Server, *atomic.Int64) {
	var conns atomic.Int64
	srv := httptest.NewUnstartedServer(handler)
	srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			conns.Add(1)
		}
	}
	srv.Start()
	t.Cleanup(srv.Close)
	return srv, &conns
}

// Each client keeps one connection for all its requests, and every request
// arrives as net/http's client would send it: method, path, headers, body.
func TestConnKeepsOneConnectionPerClient(t *testing.T) {
	t.Parallel()
	var bad atomic.Value
	srv, conns := countingServer(t, func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		switch {
		case r.Method != http.MethodPost || r.URL.Path != "/api/edi-hub/receive-message":
			bad.Store("request line " + r.Method + " " + r.URL.Path)
		case r.Header.Get("Authorization") != "Bearer k" || r.Header.Get("Content-Type") != "application/json":
			bad.Store("headers " + r.Header.Get("Authorization") + " " + r.Header.Get("Content-Type"))
		case r.ContentLength != int64(len(body)) || !strings.Contains(string(body), `"message_type":"ORDERS05"`):
			bad.Store("body " + string(body))
		}
		w.WriteHeader(http.StatusCreated)
	})
	res, err := Run(context.Background(), Config{URL: srv.URL, APIKey: "k", Mix: MixNew, Clients: 4, Requests: 50, PayloadSize: 300})
	require.NoError(t, err)
	require.Nil(t, bad.Load())
	require.Zero(t, res.Errors, res.FirstError)
	require.Equal(t, 200, res.Requests)
	require.EqualValues(t, 4, conns.Load())
}

// A server that ends connections (Connection: close), or an answer longer
// than the client reads, costs a new connection, not an error.
func TestConnConnectsAgainWhenTheServerEndsTheConnection(t *testing.T) {
	t.Parallel()
	var n atomic.Int64
	srv, conns := countingServer(t, func(w http.ResponseWriter, r *http.Request) {
		switch n.Add(1) % 3 {
		case 0:
			w.Header().Set("Connection", "close")
		case 1:
			// Longer than any answer the client reads, sent chunked.
			w.WriteHeader(http.StatusCreated)
			for range 64 {
				_, _ = io.WriteString(w, strings.Repeat("x", 1024))
				w.(http.Flusher).Flush()
			}
			return
		}
		w.WriteHeader(http.StatusCreated)
	})
	res, err := Run(context.Background(), Config{URL: srv.URL, APIKey: "k", Mix: MixNew, Clients: 1, Requests: 30, PayloadSize: 100})
	require.NoError(t, err)
	require.Zero(t, res.Errors, res.FirstError)
	require.Equal(t, 30, res.Requests)
	require.EqualValues(t, 20, conns.Load(), "one to start, then one after each of the 19 answers before the last that ended the connection")
}

// The run's end interrupts a request the server has not answered.
func TestConnStopsWithTheRun(t *testing.T) {
	t.Parallel()
	release := make(chan struct{})
	srv, _ := countingServer(t, func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-release:
		case <-r.Context().Done():
		}
	})
	defer close(release)
	server, err := parseTarget(srv.URL)
	require.NoError(t, err)
	c := newConn(server, "/x", nil)
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	started := time.Now()
	_, _, _, err = c.post(ctx, []byte("{}"), 100)
	require.ErrorIs(t, err, context.DeadlineExceeded)
	require.Less(t, time.Since(started), 10*time.Second)
}

func TestConnRefusesWhatItCannotSpeak(t *testing.T) {
	t.Parallel()
	for _, url := range []string{"https://127.0.0.1:1", "127.0.0.1:8080", "http://"} {
		_, err := Run(context.Background(), Config{URL: url, Mix: MixNew, Clients: 1, Requests: 1})
		require.ErrorContains(t, err, "server URL", url)
	}
}
