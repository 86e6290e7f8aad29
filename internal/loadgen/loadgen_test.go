package loadgen

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/tidwall/gjson"

	"github.com/lefia/edihub/internal/idocxml"
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

// A batch holds envelopes of consecutive numbers; a packet holds IDocs of
// consecutive numbers whose JSON views read like the envelope's payload.
func TestBatchAndPacketBodies(t *testing.T) {
	t.Parallel()
	batch := newBodies(FormBatch, 3, 1024, 0).build(numbers{first: 7})
	var parsed struct{ Messages []json.RawMessage }
	require.NoError(t, json.Unmarshal(batch, &parsed))
	require.Len(t, parsed.Messages, 3)
	for i, env := range parsed.Messages {
		require.JSONEq(t, string(NewDocument(1024).Envelope(uint64(7+i))), string(env))
	}

	packet := newBodies(FormPacket, 3, 1024, 0).build(numbers{first: 7})
	doc, err := idocxml.Parse(packet, "", idocxml.DefaultLimits)
	require.NoError(t, err)
	require.Len(t, doc.IDocs, 3)
	for i, idoc := range doc.IDocs {
		number := fmt.Sprintf("%016d", 7+i)
		require.Equal(t, number, idoc.Docnum)
		require.Equal(t, "ORDERS05", idoc.IDocType)
		require.Equal(t, number, gjson.GetBytes(idoc.View, "*.IDOC.E1EDK01.BELNR").Str, "the bench type's path")
		require.GreaterOrEqual(t, idoc.End-idoc.Start, 1024)
		require.Equal(t, gjson.GetBytes(NewDocument(1024).Payload(7), "ORDERS05.IDOC.E1EDS01").Raw,
			gjson.GetBytes(idoc.View, "ORDERS05.IDOC.E1EDS01").Raw)
	}
	alone := newBodies(FormPacket, 1, 1024, 0).build(numbers{first: 7})
	doc, err = idocxml.Parse(alone, "", idocxml.DefaultLimits)
	require.NoError(t, err)
	require.Len(t, doc.IDocs, 1)
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
// not seen, 200 with Idempotent-Replayed for one it has; a batch, or a
// packet of several IDocs, 200 with one accepted answer per message, or
// one duplicate answer per message when it has seen the body.
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
		n := max(bytes.Count(body, []byte(`"message_type"`)), bytes.Count(body, []byte("<IDOC ")))
		each := func(status string) {
			_, _ = io.WriteString(w, `{"messages":[`+strings.Repeat(`{"status":"`+status+`"},`, n-1)+`{"status":"`+status+`"}]}`)
		}
		many := strings.HasSuffix(r.URL.Path, "/receive-messages") || n > 1
		switch {
		case again && many:
			w.WriteHeader(http.StatusOK)
			each("duplicate")
		case again:
			w.Header().Set("Idempotent-Replayed", "true")
			w.WriteHeader(http.StatusOK)
		case many:
			w.WriteHeader(http.StatusOK)
			each("accepted")
		default:
			w.WriteHeader(http.StatusCreated)
		}
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

func TestRunCountsMessagesOfBatchesAndPackets(t *testing.T) {
	t.Parallel()
	srv := fakeEdihub(t)
	for _, mix := range []Mix{MixNew, MixDuplicate} {
		for _, form := range []Form{FormBatch, FormPacket} {
			for _, per := range []int{1, 10} {
				res, err := Run(context.Background(), Config{
					URL: srv.URL, APIKey: "k", Mix: mix, Form: form, PerRequest: per, Clients: 2, Requests: 3, PayloadSize: 256,
				})
				require.NoError(t, err)
				require.Zero(t, res.Errors, "%s %s×%d: %s", mix, form, per, res.FirstError)
				require.Equal(t, 6, res.Requests)
				require.InDelta(t, res.RPS*float64(per), res.MPS, 1e-9)
			}
		}
	}
	_, err := Run(context.Background(), Config{URL: srv.URL, Mix: MixReplay, Form: FormPacket, PerRequest: 10, Clients: 1, Requests: 1})
	require.ErrorContains(t, err, "new and duplicate mixes")
	_, err = Run(context.Background(), Config{URL: srv.URL, Mix: MixNew, PerRequest: 10, Clients: 1, Requests: 1})
	require.ErrorContains(t, err, "one message")
}

// An answer that accepted fewer messages than the request carried is an
// error.
func TestRunCountsPartlyAcceptedBatchesAsErrors(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.WriteString(w, `{"messages":[{"status":"accepted"},{"status":"duplicate"}]}`)
	}))
	t.Cleanup(srv.Close)
	res, err := Run(context.Background(), Config{URL: srv.URL, Mix: MixNew, Form: FormBatch, PerRequest: 2, Clients: 1, Requests: 2, PayloadSize: 100})
	require.NoError(t, err)
	require.Equal(t, 2, res.Errors)
	require.Contains(t, res.FirstError, "1 of 2 messages accepted")
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
			{Mix: MixNew, Clients: 16, RPS: 500, P50: 1, P95: 2, P99: 3, ServerRSS: 20 << 20, ServerPeak: 30 << 20,
				ServerCPU: 210.4, PostgresCPU: 330, LoadCPU: 95.6},
			{Mix: MixReplay, Clients: 64, RPS: 100},
			{Label: "floor", Mix: MixNew, Clients: 16, RPS: 800, ServerCPU: 140, PostgresCPU: 400, LoadCPU: 40},
			{Mix: MixNew, Form: FormPacket, PerRequest: 10, Clients: 16, RPS: 150, MPS: 1500, P50: 9, P99: 30},
			{Label: "floor", Mix: MixNew, Form: FormBatch, PerRequest: 10, Clients: 16, RPS: 200, MPS: 2000},
			{Mix: MixNew, Form: FormBatch, PerRequest: 100, Clients: 16, RPS: 10, MPS: 1000},
		},
		Pgbench: []Pgbench{{Clients: 16, TPS: 1000}, {Clients: 16, Rows: 10, TPS: 300}},
		Memory:  &Result{Mix: MixNew, Clients: 16, Requests: 32, BodyBytes: 5 << 20, InFlightSize: 80 << 20, ServerPeak: 160 << 20},
	}
	var out strings.Builder
	require.NoError(t, rep.Write(&out))
	require.Contains(t, out.String(), "| new | 16 | 500 | 1.00 | 2.00 | 3.00 | 0 | 1000 | 0.50 | 210 / 330 / 96 | 20.0 MiB |")
	require.Contains(t, out.String(), "| replay | 64 | 100 | 0.00 | 0.00 | 0.00 | 0 | n/a | n/a | n/a | n/a |")
	require.Contains(t, out.String(), "| new, floor | 16 | 800 | 0.00 | 0.00 | 0.00 | 0 | 1000 | 0.80 | 140 / 400 / 40 | n/a |")
	// Every request of 10 messages is compared with the batch floor of 10;
	// a size the floor did not run has no ratio.
	require.Contains(t, out.String(), "| new | packet | 10 | 16 | 150 | 1500 | 9.00 | 30.00 | 0 | 1000 | 1.50 | 3000 | 0.50 | 0.75 | n/a | n/a |")
	require.Contains(t, out.String(), "| new, floor | batch | 10 | 16 | 200 | 2000 | 0.00 | 0.00 | 0 | 1000 | 2.00 | 3000 | 0.67 | 1.00 |")
	require.Contains(t, out.String(), "| new | batch | 100 | 16 | 10 | 1000 | 0.00 | 0.00 | 0 | 1000 | 1.00 | n/a | n/a | n/a |")
	require.Contains(t, out.String(), "peak RSS (VmHWM) over these rows: 30.0 MiB")
	require.Contains(t, out.String(), "peak RSS 160.0 MiB = 2.00 × the bytes in flight")
	require.NotContains(t, out.String(), "run right after each row")

	// A pgbench run beside a row is what that row is compared with; the
	// 10-row insert stays the one of its own.
	rep.Pgbench = append(rep.Pgbench, Pgbench{Clients: 16, TPS: 400, Beside: 1}, Pgbench{Clients: 16, TPS: 3000, Beside: 4})
	out.Reset()
	require.NoError(t, rep.Write(&out))
	require.Contains(t, out.String(), "| new | 16 | 500 | 1.00 | 2.00 | 3.00 | 0 | 400 | 1.25 | 210 / 330 / 96 | 20.0 MiB |")
	require.Contains(t, out.String(), "| new, floor | 16 | 800 | 0.00 | 0.00 | 0.00 | 0 | 1000 | 0.80 |", "no run beside it")
	require.Contains(t, out.String(), "| new | packet | 10 | 16 | 150 | 1500 | 9.00 | 30.00 | 0 | 3000 | 0.50 | 3000 | 0.50 | 0.75 | n/a | n/a |")
	require.Contains(t, out.String(), "run right after each row")
}

// With a rate, the clients together send that many requests a second, on
// schedule, however fast the server answers.
func TestRunKeepsTheRate(t *testing.T) {
	t.Parallel()
	srv := fakeEdihub(t)
	start := time.Now()
	res, err := Run(context.Background(), Config{
		URL: srv.URL, APIKey: "k", Mix: MixNew, Clients: 4, Requests: 10, Rate: 100, PayloadSize: 512,
	})
	require.NoError(t, err)
	require.Equal(t, 40, res.Requests)
	// The last of 40 requests at 100 a second is due 390 ms after the first.
	require.GreaterOrEqual(t, time.Since(start), 390*time.Millisecond)
}

// With the server's process given, a run splits the CPU it measured per
// message. The fake server runs in the test's own process and spends at
// least 5 ms of CPU on each request, so the server's share and the load
// generator's (the same process here) are at least about that.
func TestRunSplitsCPUPerMessage(t *testing.T) {
	t.Parallel()
	fake := fakeEdihub(t)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		spendCPU(t, 5*time.Millisecond)
		proxied, err := http.Post(fake.URL+r.URL.Path, r.Header.Get("Content-Type"), r.Body)
		require.NoError(t, err)
		defer proxied.Body.Close()
		w.WriteHeader(proxied.StatusCode)
		_, _ = io.Copy(w, proxied.Body)
	}))
	t.Cleanup(srv.Close)
	res, err := Run(context.Background(), Config{
		URL: srv.URL, APIKey: "k", Mix: MixNew, Clients: 1, Warmup: 20 * time.Millisecond, Duration: 300 * time.Millisecond,
		PayloadSize: 256, ServerPID: os.Getpid(),
	})
	require.NoError(t, err)
	require.GreaterOrEqual(t, res.Requests, 10)
	// /proc counts whole ticks of 10 ms, so the total may read up to two
	// ticks short.
	floor := float64((5*time.Duration(res.Requests)*time.Millisecond - 20*time.Millisecond).Microseconds()) / float64(res.Requests)
	require.GreaterOrEqual(t, res.ServerCPU, floor)
	require.GreaterOrEqual(t, res.LoadCPU, floor)
	require.GreaterOrEqual(t, res.PostgresCPU, 0.0)
}

// spendCPU keeps its thread busy until the thread has used d of CPU time.
func spendCPU(t *testing.T, d time.Duration) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	used := func() time.Duration {
		var u syscall.Rusage
		require.NoError(t, syscall.Getrusage(syscall.RUSAGE_THREAD, &u))
		return time.Duration(u.Utime.Nano() + u.Stime.Nano())
	}
	for start := used(); used()-start < d; {
	}
}

func TestProcessCPUReadsUserAndSystemTime(t *testing.T) {
	_, _, err := processCPU("0")
	require.Error(t, err)
	self, start, err := processCPU(strconv.Itoa(os.Getpid()))
	require.NoError(t, err)
	_, parentStart, err := processCPU(strconv.Itoa(os.Getppid()))
	require.NoError(t, err)
	require.GreaterOrEqual(t, start, parentStart, "a process starts after its parent")
	var usage syscall.Rusage
	require.NoError(t, syscall.Getrusage(syscall.RUSAGE_SELF, &usage))
	// /proc counts in ticks of 10 ms; getrusage is finer, and read a
	// moment later.
	require.InDelta(t, time.Duration(usage.Utime.Nano()+usage.Stime.Nano()).Seconds(), self.Seconds(), 0.1)
}

// PostgreSQL's CPU between two readings counts the processes of the second:
// a backend that exited in between (another client's, say) is left out
// instead of subtracted, one started since counts in full, and a pid
// reused by a later process is that later process.
func TestCPUBetweenReadingsCountsTheProcessesOfTheSecond(t *testing.T) {
	t.Parallel()
	ms := time.Millisecond
	before := CPU{Server: 10 * ms, Load: 5 * ms, postgres: map[postgresProcess]time.Duration{
		{"100", 1}: 300 * ms, {"200", 1}: 600 * ms, {"300", 1}: 100 * ms,
	}}
	after := CPU{Server: 30 * ms, Load: 8 * ms, postgres: map[postgresProcess]time.Duration{
		{"100", 1}: 350 * ms, // ran on: 50
		{"300", 9}: 20 * ms,  // pid 300 reused since: 20
		{"400", 9}: 100 * ms, // started since: 100
	}}
	require.Equal(t, CPU{Server: 20 * ms, Load: 3 * ms, Postgres: 170 * ms}, after.sub(before))
}

func TestBackendDatabaseReadsProcessTitles(t *testing.T) {
	t.Parallel()
	for title, want := range map[string]string{
		"postgres: 15/main: postgres edihub_bench 127.0.0.1(39934) idle\x00":    "edihub_bench",
		"postgres: app orders [local] SELECT":                                   "orders",
		"postgres: 15/main: postgres test 127.0.0.1(40012) idle in transaction": "test",
		"postgres: 15/main: walwriter   ":                                       "",
		"postgres: 15/main: autovacuum worker edihub_bench":                     "",
		"/usr/lib/postgresql/15/bin/postgres -D /var/lib/postgresql/15/main":    "",
	} {
		db, isClient := backendDatabase([]byte(title))
		require.Equal(t, want, db, title)
		require.Equal(t, want != "", isClient, title)
	}
}
