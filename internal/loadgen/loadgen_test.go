package loadgen

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestDocument(t *testing.T) {
	t.Parallel()
	d := NewDocument(2048)
	env := d.Envelope(42)
	var parsed struct {
		MessageType string `json:"message_type"`
		Docnum      string `json:"docnum"`
		Payload     struct {
			ORDERS05 struct {
				IDOC struct {
					EDIDC40 struct {
						DOCNUM string `json:"DOCNUM"`
					} `json:"EDI_DC40"`
					E1EDK01 struct {
						BELNR string `json:"BELNR"`
					} `json:"E1EDK01"`
				} `json:"IDOC"`
			} `json:"ORDERS05"`
		} `json:"payload"`
	}
	require.NoError(t, json.Unmarshal(env, &parsed))
	require.Equal(t, "ORDERS05", parsed.MessageType)
	for _, got := range []string{parsed.Docnum, parsed.Payload.ORDERS05.IDOC.EDIDC40.DOCNUM, parsed.Payload.ORDERS05.IDOC.E1EDK01.BELNR} {
		require.Equal(t, "0000000000000042", got)
	}

	payload := d.Payload(42)
	require.True(t, json.Valid(payload))
	require.GreaterOrEqual(t, len(payload), 2048)
	require.True(t, bytes.Contains(env, payload))
	require.NotEqual(t, string(env), string(d.Envelope(43)), "numbers differ")
	require.Equal(t, string(env), string(d.Envelope(42)), "the template is not changed")
}

func TestPercentile(t *testing.T) {
	t.Parallel()
	var l []time.Duration
	for i := 1; i <= 100; i++ {
		l = append(l, time.Duration(i)*time.Millisecond)
	}
	require.Equal(t, 50*time.Millisecond, percentile(l, 50))
	require.Equal(t, 99*time.Millisecond, percentile(l, 99))
	require.Equal(t, 100*time.Millisecond, percentile(l, 100))
	require.Equal(t, 7*time.Millisecond, percentile([]time.Duration{7 * time.Millisecond}, 99))
	require.Zero(t, percentile(nil, 50))
}

// fakeEdihub answers like edihub: 201 for a body or Idempotency-Key it has
// not seen, 200 with Idempotent-Replayed for one it has.
func fakeEdihub(t *testing.T) *httptest.Server {
	var mu sync.Mutex
	seen := map[string]bool{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(r.Body)
		require.NoError(t, err)
		id := r.Header.Get("Idempotency-Key") + string(body)
		mu.Lock()
		again := seen[id]
		seen[id] = true
		mu.Unlock()
		if again {
			w.Header().Set("Idempotent-Replayed", "true")
			w.WriteHeader(http.StatusOK)
			return
		}
		w.WriteHeader(http.StatusCreated)
	}))
	t.Cleanup(srv.Close)
	return srv
}

func TestRunCountsRequestsPerMix(t *testing.T) {
	t.Parallel()
	srv := fakeEdihub(t)
	for _, mix := range []Mix{MixNew, MixDuplicate, MixReplay} {
		res, err := Run(context.Background(), Config{
			URL: srv.URL, APIKey: "k", Mix: mix, Clients: 3, Requests: 5, PayloadSize: 512,
		})
		require.NoError(t, err)
		require.Equal(t, 15, res.Requests, mix)
		require.Zero(t, res.Errors, "%s: %s", mix, res.FirstError)
		require.Positive(t, res.P99, mix)
		require.LessOrEqual(t, res.P50, res.P99, mix)
	}
}

func TestRunCountsWrongAnswersAsErrors(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "boom", http.StatusServiceUnavailable)
	}))
	t.Cleanup(srv.Close)
	var progress bytes.Buffer
	res, err := Run(context.Background(), Config{
		URL: srv.URL, APIKey: "k", Mix: MixNew, Clients: 2, Duration: 1200 * time.Millisecond,
		PayloadSize: 100, Progress: &progress,
	})
	require.NoError(t, err)
	require.Zero(t, res.Requests)
	require.Positive(t, res.Errors)
	require.Contains(t, res.FirstError, "status 503")
	require.Contains(t, progress.String(), "errors")
}

func TestReportWrite(t *testing.T) {
	t.Parallel()
	rep := Report{
		Rows: []Result{
			{Mix: MixNew, Clients: 16, RPS: 500, P50: 1, P95: 2, P99: 3, ServerRSS: 20 << 20, ServerPeak: 30 << 20},
			{Mix: MixReplay, Clients: 64, RPS: 100},
		},
		Pgbench: []Pgbench{{Clients: 16, TPS: 1000}},
		Memory:  &Result{Mix: MixNew, Clients: 16, Requests: 32, BodyBytes: 5 << 20, InFlightSize: 80 << 20, ServerPeak: 160 << 20},
	}
	var out strings.Builder
	require.NoError(t, rep.Write(&out))
	require.Contains(t, out.String(), "| new | 16 | 500 | 1.00 | 2.00 | 3.00 | 0 | 1000 | 0.50 | 20.0 MiB |")
	require.Contains(t, out.String(), "| replay | 64 | 100 | 0.00 | 0.00 | 0.00 | 0 | n/a | n/a | n/a |")
	require.Contains(t, out.String(), "peak RSS (VmHWM) over these rows: 30.0 MiB")
	require.Contains(t, out.String(), "peak RSS 160.0 MiB = 2.00 × the bytes in flight")
}
