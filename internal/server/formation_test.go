package server_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/lefia/edihub/internal/config"
	"github.com/lefia/edihub/internal/delivery"
	"github.com/lefia/edihub/internal/pgtest"
	"github.com/lefia/edihub/internal/schema"
)

// formationTraffic sends every kind of intake edihub has, from several
// senders, until stopped, and keeps what was acknowledged.
type formationTraffic struct {
	b      *testBundle
	client *http.Client
	// webhook is the id of a GitHub integration that the senders' webhooks
	// go to, signed with githubSecret.
	webhook string

	mu       sync.Mutex
	statuses map[int]int
	noRetry  int               // 503 answers without Retry-After
	acked    map[string]string // docnum of each acknowledged message → when and how it was
	keyed    map[string]string // Idempotency-Key → the body of its first 2xx
	keyBody  map[string][]byte
	requests atomic.Int64
}

func newFormationTraffic(b *testBundle, webhook string) *formationTraffic {
	return &formationTraffic{
		b: b, client: &http.Client{Timeout: 30 * time.Second, Transport: testClient.Transport}, webhook: webhook,
		statuses: map[int]int{}, acked: map[string]string{}, keyed: map[string]string{}, keyBody: map[string][]byte{},
	}
}

// post sends one request and returns its status and body; 0 when the
// connection failed (edihub itself never goes away in this test).
func (f *formationTraffic) post(path, contentType string, body []byte, headers ...string) (int, []byte) {
	req, _ := http.NewRequest(http.MethodPost, f.b.url+path, bytes.NewReader(body))
	if !strings.HasPrefix(path, "/api/webhook/") {
		req.Header.Set("Authorization", "Bearer "+f.b.apiKey)
	}
	req.Header.Set("Content-Type", contentType)
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	f.requests.Add(1)
	resp, err := f.client.Do(req)
	if err != nil {
		f.record(0, false)
		return 0, nil
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	f.record(resp.StatusCode, resp.Header.Get("Retry-After") != "")
	return resp.StatusCode, raw
}

func (f *formationTraffic) record(status int, retryAfter bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.statuses[status]++
	if status == http.StatusServiceUnavailable && !retryAfter {
		f.noRetry++
	}
}

// ack records docnums as acknowledged by an answer: its time, status and
// body, which a failing test prints for a message it cannot find.
func (f *formationTraffic) ack(status int, body []byte, docnums ...string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	answer := fmt.Sprintf("%s %d %.600s", time.Now().UTC().Format("15:04:05.000"), status, body)
	for _, d := range docnums {
		if _, seen := f.acked[d]; !seen {
			f.acked[d] = answer
		}
	}
}

// until retries send, as SAP and middleware do, until it is acknowledged
// or stop is closed.
func until(stop <-chan struct{}, send func() bool) {
	for !send() {
		select {
		case <-stop:
			return
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// sender sends, in turn, a message with an Idempotency-Key, one without
// (twice, as a retransmission), a batch of five, an IDoc-XML packet of
// five and a signed webhook (twice, as a sender that timed out resends
// it), each retried until acknowledged.
func (f *formationTraffic) sender(w int, stop <-chan struct{}) {
	for i := 0; ; i++ {
		select {
		case <-stop:
			return
		default:
		}
		key, keyed := fmt.Sprintf("k-%d-%d", w, i), fmt.Sprintf("K%d-%d", w, i)
		body := fmt.Appendf(nil, `{"message_type":"ORDERS05","docnum":%q,"payload":{"n":%q}}`, keyed, keyed)
		until(stop, func() bool {
			status, raw := f.post("/api/edi-hub/receive-message", "application/json", body, "Idempotency-Key", key)
			if status != http.StatusCreated && status != http.StatusOK {
				return false
			}
			f.mu.Lock()
			if _, seen := f.keyed[key]; !seen {
				f.keyed[key], f.keyBody[key] = string(raw), body
			}
			f.mu.Unlock()
			f.ack(status, raw, keyed)
			return true
		})

		plain := fmt.Sprintf("F%d-%d", w, i)
		body = fmt.Appendf(nil, `{"message_type":"ORDERS05","docnum":%q,"payload":{"n":%q}}`, plain, plain)
		for range 2 {
			until(stop, func() bool {
				status, raw := f.post("/api/edi-hub/receive-message", "application/json", body)
				if status == http.StatusCreated || status == http.StatusOK {
					f.ack(status, raw, plain)
					return true
				}
				return false
			})
		}

		var items []string
		var batch bytes.Buffer
		batch.WriteString(`{"messages":[`)
		for j := range 5 {
			d := fmt.Sprintf("B%d-%d-%d", w, i, j)
			items = append(items, d)
			if j > 0 {
				batch.WriteByte(',')
			}
			fmt.Fprintf(&batch, `{"message_type":"ORDERS05","docnum":%q,"payload":{"n":%q}}`, d, d)
		}
		batch.WriteString(`]}`)
		until(stop, func() bool {
			status, raw := f.post("/api/edi-hub/receive-messages", "application/json", batch.Bytes())
			if status == http.StatusOK {
				f.ack(status, raw, items...)
				return true
			}
			return false
		})

		first := 1_000_000 + w*100_000 + i*5
		packet := smallPacket(5, first)
		until(stop, func() bool {
			status, raw := f.post("/api/edi-hub/receive-message", "application/x-sap.idoc", packet)
			if status != http.StatusOK && status != http.StatusCreated {
				return false
			}
			for j := range 5 {
				f.ack(status, raw, fmt.Sprint(first+j))
			}
			return true
		})

		hook := fmt.Sprintf("W%d-%d", w, i)
		body = fmt.Appendf(nil, `{"EDI_DC40":{"DOCNUM":%q},"n":%q}`, hook, hook)
		for range 2 {
			until(stop, func() bool {
				status, raw := f.post("/api/webhook/"+f.webhook, "application/json", body,
					githubHeaders(githubSecret, body, "delivery-"+hook)...)
				if status == http.StatusCreated || status == http.StatusOK {
					f.ack(status, raw, hook)
					return true
				}
				return false
			})
		}
	}
}

// deliveryLog is a destination's receiver: it answers every delivery at
// once and keeps the webhook-ids each message arrived with.
type deliveryLog struct {
	mu         sync.Mutex
	webhookIDs map[string]map[string]bool // Edihub-Message-Id → webhook-ids seen
}

func (d *deliveryLog) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	_, _ = io.Copy(io.Discard, r.Body)
	d.mu.Lock()
	id := r.Header.Get("Edihub-Message-Id")
	if d.webhookIDs[id] == nil {
		d.webhookIDs[id] = map[string]bool{}
	}
	d.webhookIDs[id][r.Header.Get("webhook-id")] = true
	d.mu.Unlock()
	w.WriteHeader(http.StatusNoContent)
}

// Acknowledged means on two machines: under mixed traffic and deliveries
// in flight, the formation (a primary and two standbys) loses its
// primary's machine, then switches over as planned, then loses a standby's
// machine, and writes come back by themselves after each. Afterwards every
// acknowledged message is stored exactly once, every Idempotency-Key
// replays its first answer, every stored message reached the receiver
// under one webhook-id, and the senders saw nothing but 2xx, 4xx and 503
// with Retry-After.
//
// It makes a formation of its own (pgtest.NewFormation), so it needs
// pg_autoctl, which make test installs (scripts/test-setup.sh); make
// test-ha runs it alone.
func TestFormationKeepsEveryAcknowledgedMessage(t *testing.T) {
	t.Parallel()
	formation := pgtest.NewFormation(t)
	pool := pgtest.PoolFor(t, formation.URL())
	_, err := schema.Migrate(context.Background(), pool)
	require.NoError(t, err)

	receiver := &deliveryLog{webhookIDs: map[string]map[string]bool{}}
	rcv := httptest.NewServer(receiver)
	t.Cleanup(rcv.Close)
	vars := map[string]string{"DESTINATION_ALLOWED_CIDRS": "127.0.0.1/32"}
	b, shutdown, served := startServeOn(t, pool, vars, io.Discard)
	t.Cleanup(func() {
		shutdown()
		require.NoError(t, <-served)
	})
	// Delivery workers beside it, as `edihub serve` runs them.
	cfg, err := config.Load(func(k string) string { return vars[k] })
	require.NoError(t, err)
	runner, err := delivery.NewRunner(pool, cfg.Delivery, cfg.ShutdownTimeout, slog.New(slog.NewJSONHandler(io.Discard, nil)), nil)
	require.NoError(t, err)
	ctx, stopWorkers := context.WithCancel(context.Background())
	workersDone := make(chan error, 1)
	go func() { workersDone <- runner.Run(ctx) }()
	t.Cleanup(func() {
		stopWorkers()
		require.NoError(t, <-workersDone)
	})
	b.messageType(t, "ORDERS05", nil, nil)
	b.destination(t, rcv.URL+"/edi")

	traffic := newFormationTraffic(b, b.integration(t, "ORDERS05", "github", githubSecret))
	stop := make(chan struct{})
	var senders sync.WaitGroup
	for w := range 4 {
		senders.Go(func() { traffic.sender(w, stop) })
	}
	acked := func() int {
		traffic.mu.Lock()
		defer traffic.mu.Unlock()
		return len(traffic.acked)
	}
	// progress waits until traffic is acknowledged again after a fault.
	// fault logs when each fault happens, to be read beside the
	// acknowledgments' and the monitor's times.
	fault := func(what string) { t.Logf("%s %s", time.Now().UTC().Format("15:04:05.000"), what) }
	progress := func(what string) {
		t.Helper()
		before, start := acked(), time.Now()
		require.Eventually(t, func() bool { return acked() > before+20 }, 90*time.Second, 100*time.Millisecond,
			"messages are acknowledged again after %s", what)
		t.Logf("%s: acknowledged again after %s", what, time.Since(start).Round(100*time.Millisecond))
	}

	progress("the start")
	primary := formation.Primary()
	fault("losing the primary " + primary)
	formation.Lose(primary)
	progress("losing the primary " + primary)
	formation.Back(primary)

	fault("switching over")
	formation.Switchover()
	progress("a switchover")
	formation.WaitHealthy(time.Minute)

	standby := map[string]string{"node1": "node2", "node2": "node3", "node3": "node1"}[formation.Primary()]
	fault("losing the standby " + standby)
	formation.Lose(standby)
	progress("losing the standby " + standby)
	ready := do(t, http.MethodGet, b.url+"/readyz", nil, nil)
	require.Equal(t, http.StatusOK, ready.status, "the other standby confirms commits: %s", ready.body)
	require.Equal(t, "synchronous standby", ready.json(t)["replication"])
	close(stop)
	senders.Wait()
	formation.Back(standby)

	// The senders have stopped: what they recorded is read without its lock
	// from here on, since the replays below record their answers too.
	traffic.mu.Lock()
	statuses, ackedDocnums, keyed, noRetry := maps.Clone(traffic.statuses), maps.Clone(traffic.acked), maps.Clone(traffic.keyed), traffic.noRetry
	traffic.mu.Unlock()
	for status, n := range statuses {
		require.True(t, status >= 200 && status < 500 || status == http.StatusServiceUnavailable,
			"only 2xx, 4xx and 503 are answered, got %d × %d", n, status)
	}
	require.Zero(t, noRetry, "every 503 carries Retry-After")

	check := pgtest.PoolFor(t, formation.URL())
	counts := map[string]int{}
	rows, err := check.Query(context.Background(), `SELECT docnum, count(*) FROM messages GROUP BY docnum`)
	require.NoError(t, err)
	for rows.Next() {
		var docnum string
		var n int
		require.NoError(t, rows.Scan(&docnum, &n))
		counts[docnum] = n
	}
	require.NoError(t, rows.Err())
	for docnum, n := range counts {
		require.Equal(t, 1, n, "message %s is stored once", docnum)
	}
	var lost []string
	for docnum, answer := range ackedDocnums {
		if counts[docnum] != 1 {
			lost = append(lost, answer[:len("15:04:05.000")]+" "+docnum+" "+answer[len("15:04:05.000"):])
		}
	}
	if len(lost) > 0 {
		// CI keeps the start and the end of a failure's output: the count and
		// the window come first, a few of the answers, then the events.
		slices.Sort(lost)
		t.Fatalf("%d of %d acknowledged messages are not stored, acknowledged from %s to %s; the first ones:\n%s\nthe formation's events:\n%s",
			len(lost), len(ackedDocnums), lost[0][:12], lost[len(lost)-1][:12],
			strings.Join(lost[:min(len(lost), 8)], "\n"), formation.Events())
	}

	for key, first := range keyed {
		status, raw := traffic.post("/api/edi-hub/receive-message", "application/json", traffic.keyBody[key], "Idempotency-Key", key)
		require.Equal(t, http.StatusOK, status, "key %s replays", key)
		require.JSONEq(t, first, string(raw), "key %s replays its first answer", key)
	}

	require.Eventually(t, func() bool {
		var pending int
		err := check.QueryRow(context.Background(), `SELECT count(*) FROM deliveries WHERE status <> 'delivered'`).Scan(&pending)
		return err == nil && pending == 0
	}, 5*time.Minute, time.Second, "every delivery is delivered after the faults (a job whose completion a failover lost is rescued after RescueStuckJobsAfter)")
	receiver.mu.Lock()
	defer receiver.mu.Unlock()
	var ids []int64
	rows, err = check.Query(context.Background(), `SELECT id FROM messages`)
	require.NoError(t, err)
	for rows.Next() {
		var id int64
		require.NoError(t, rows.Scan(&id))
		ids = append(ids, id)
	}
	require.NoError(t, rows.Err())
	for _, id := range ids {
		seen := receiver.webhookIDs[fmt.Sprint(id)]
		require.Len(t, seen, 1, "message %d reached the receiver under one webhook-id", id)
	}
	t.Logf("%d requests, %d messages acknowledged and stored once, %d keys replayed, %d delivered; answers %v",
		traffic.requests.Load(), len(ackedDocnums), len(keyed), len(ids), statuses)
}
