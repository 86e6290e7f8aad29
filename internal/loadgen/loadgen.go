// Package loadgen drives a running edihub with concurrent clients posting to
// receive-message (JSON envelopes, IDoc-XML documents and packets, X12 and
// EDIFACT interchanges) and receive-messages (JSON batches) and measures
// what they see: throughput in requests and messages, latency percentiles,
// errors, and the server's resident memory. It backs cmd/edihub-load and
// `make bench` (docs/performance.md).
package loadgen

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"sync"
	"sync/atomic"
	"time"
)

// Mix is what every request of a run is.
type Mix string

// The three mixes: every answer is a new message, a fingerprint duplicate,
// or an Idempotency-Key replay.
const (
	MixNew       Mix = "new"
	MixDuplicate Mix = "duplicate"
	MixReplay    Mix = "replay"
)

// ParseMix checks a mix name.
func ParseMix(s string) (Mix, error) {
	return parseName("mix", s, MixNew, MixDuplicate, MixReplay)
}

// Config is one run.
type Config struct {
	URL    string // edihub's base URL, e.g. http://127.0.0.1:8080
	APIKey string
	Mix    Mix
	// Clients is the number of concurrent clients, each sending one request
	// at a time over its own keep-alive connection.
	Clients int
	// Warmup runs the mix unmeasured first; then Duration is measured.
	// With Requests > 0 instead, each client sends that many requests, all
	// measured, and the durations are ignored.
	Warmup, Duration time.Duration
	Requests         int
	// Rate, when above 0, is the requests per second all clients send
	// together, each its share on a fixed schedule, so that a run measures
	// latency at a steady load (as a background job competes with it, say)
	// rather than the most the server can take. A client that falls behind
	// sends at once, up to its one request at a time.
	Rate        float64
	PayloadSize int // bytes of each message's payload
	// Form is how each request carries its messages, and PerRequest how
	// many it carries (1 for an envelope); batches, packets and
	// interchanges are measured with MixNew and MixDuplicate (each request
	// sent again whole).
	Form       Form
	PerRequest int
	// ServerPID, when not 0, is the server process whose memory is sampled
	// and whose CPU time is measured, with PostgreSQL's: the backends of
	// PostgresDatabase (of every database when that is "") and the
	// server's own processes.
	ServerPID        int
	PostgresDatabase string
	// Progress receives a status line every second; nil for none.
	Progress io.Writer
	// Label names the server when it is not edihub (the bench's "floor",
	// see Floor), for the report.
	Label string
	// Round, when above 0, is the round of the bench's comparison with
	// the floor the run belongs to: the report compares its rows with the
	// floor's of the same round (see Report.Write).
	Round int
}

// Result is what a run measured. Latencies are in milliseconds.
type Result struct {
	Label        string  `json:"label,omitempty"` // Config.Label
	Round        int     `json:"round,omitempty"` // Config.Round
	Mix          Mix     `json:"mix"`
	Form         Form    `json:"form"`
	PerRequest   int     `json:"messages_per_request"`
	Clients      int     `json:"clients"`
	BodyBytes    int     `json:"body_bytes"`
	Requests     int     `json:"requests"`
	Errors       int     `json:"errors"`
	Seconds      float64 `json:"seconds"`
	RPS          float64 `json:"rps"`
	MPS          float64 `json:"messages_per_second"` // RPS × PerRequest
	P50          float64 `json:"p50_ms"`
	P95          float64 `json:"p95_ms"`
	P99          float64 `json:"p99_ms"`
	Max          float64 `json:"max_ms"`
	FirstError   string  `json:"first_error,omitempty"`
	ServerRSS    int64   `json:"server_rss_bytes,omitempty"`      // the most sampled during the run
	ServerPeak   int64   `json:"server_peak_rss_bytes,omitempty"` // VmHWM when the run ended
	InFlightSize int64   `json:"in_flight_bytes"`                 // Clients × BodyBytes
	// CPU per message over the measured time, in µs, when the server's
	// process is known: the server's, PostgreSQL's and the load
	// generator's own.
	ServerCPU   float64 `json:"server_cpu_us_per_message,omitempty"`
	PostgresCPU float64 `json:"postgres_cpu_us_per_message,omitempty"`
	LoadCPU     float64 `json:"load_cpu_us_per_message,omitempty"`
}

// Run drives the server as cfg says and returns what it measured. A request
// that fails or gets an answer other than the mix's is counted as an error;
// the run goes on.
func Run(ctx context.Context, cfg Config) (Result, error) {
	if cfg.Clients < 1 {
		return Result{}, errors.New("clients must be at least 1")
	}
	if cfg.Requests <= 0 && cfg.Duration <= 0 {
		return Result{}, errors.New("give a duration or a number of requests per client")
	}
	if cfg.Form == "" {
		cfg.Form = FormEnvelope
	}
	cfg.PerRequest = max(cfg.PerRequest, 1)
	if cfg.Form == FormEnvelope && cfg.PerRequest != 1 {
		return Result{}, errors.New("an envelope carries one message; use the batch or packet form for more")
	}
	if cfg.Form != FormEnvelope && cfg.Mix == MixReplay {
		return Result{}, errors.New("batches, packets and interchanges are measured with the new and duplicate mixes")
	}
	r, err := newRunner(cfg)
	if err != nil {
		return Result{}, err
	}
	stopSampling := r.sampleMemory()
	stopProgress := r.progress()
	start := time.Now()
	r.start = start
	r.measureFrom = start.Add(cfg.Warmup)
	r.until = r.measureFrom.Add(cfg.Duration)
	if cfg.Requests > 0 {
		r.measureFrom, r.until = start, time.Time{}
	}

	cpuFrom := r.cpuAt(r.measureFrom)
	latencies := make([][]time.Duration, cfg.Clients)
	var wg sync.WaitGroup
	for id := range cfg.Clients {
		wg.Go(func() { latencies[id] = r.client(ctx, id) })
	}
	wg.Wait()
	elapsed := time.Since(r.measureFrom)
	stopProgress()
	rss := stopSampling()

	res := Result{
		Label: cfg.Label, Round: cfg.Round, Mix: cfg.Mix, Form: cfg.Form, PerRequest: cfg.PerRequest, Clients: cfg.Clients, BodyBytes: len(r.bodies.build(numbers{})),
		Errors: int(r.errors.Load()), Seconds: elapsed.Seconds(), FirstError: r.firstError(),
		ServerRSS: rss,
	}
	res.InFlightSize = int64(res.Clients) * int64(res.BodyBytes)
	var all []time.Duration
	for _, l := range latencies {
		all = append(all, l...)
	}
	res.Requests = len(all)
	res.RPS = float64(len(all)) / elapsed.Seconds()
	res.MPS = res.RPS * float64(cfg.PerRequest)
	summarise(&res, all)
	if err := r.cpuPerMessage(&res, cpuFrom); err != nil {
		return res, err
	}
	if cfg.ServerPID != 0 {
		m, err := ReadMemory(cfg.ServerPID)
		if err != nil {
			return res, err
		}
		res.ServerPeak = m.Peak
	}
	return res, ctx.Err()
}

// runner is the state the clients of one run share.
type runner struct {
	cfg         Config
	server      target
	bodies      bodies
	base        uint64        // first document number of this run
	next        atomic.Uint64 // next new document number, for MixNew
	start       time.Time     // the schedule of Config.Rate counts from here
	measureFrom time.Time
	until       time.Time    // zero: Requests per client instead
	done        atomic.Int64 // requests answered, warm-up included, for the progress line
	errors      atomic.Int64
	errMu       sync.Mutex
	errFirst    string
}

func newRunner(cfg Config) (*runner, error) {
	server, err := parseTarget(cfg.URL)
	if err != nil {
		return nil, err
	}
	r := &runner{
		cfg:    cfg,
		server: server,
		// Document numbers start at the current time in microseconds, so
		// that runs one after the other against the same database never
		// reuse a number: a run sends far fewer than a million requests a
		// second.
		base: uint64(time.Now().UnixMicro()),
	}
	r.bodies = newBodies(cfg.Form, cfg.PerRequest, cfg.PayloadSize, r.base)
	// New messages take numbers after the ones the duplicate and replay
	// clients keep sending, PerRequest for each client.
	r.next.Store(r.base + uint64(cfg.Clients)*uint64(cfg.PerRequest))
	return r, nil
}

// client sends requests one after the other until the run ends and returns
// the latencies of the measured ones.
func (r *runner) client(ctx context.Context, id int) []time.Duration {
	latencies := make([]time.Duration, 0, 1<<12)
	// Duplicates and replays repeat one request per client (a packet or
	// batch sent again whole, as SAP resends one); the first sending
	// stores its messages and is not measured.
	var fixed []byte
	var control uint64 // this client's interchanges so far
	numbered := func(first uint64) numbers {
		control++
		return numbers{first: first, client: id, control: control}
	}
	key := ""
	if r.cfg.Mix == MixReplay {
		key = fmt.Sprintf("bench-%d-%d", r.base, id)
	}
	c := r.connect(key)
	defer c.close()
	if r.cfg.Mix != MixNew {
		fixed = r.bodies.build(numbered(r.base + uint64(id)*uint64(r.cfg.PerRequest)))
		if err := r.send(ctx, c, fixed, r.bodies.checkNew); err != nil {
			r.fail(err)
		}
	}
	for n := 0; ctx.Err() == nil; n++ {
		if r.until.IsZero() && n >= r.cfg.Requests {
			break
		}
		if !r.wait(ctx, id, n) {
			break
		}
		started := time.Now()
		if !r.until.IsZero() && !started.Before(r.until) {
			break
		}
		body, check := fixed, r.bodies.checkDuplicate
		if r.cfg.Mix == MixNew {
			per := uint64(r.cfg.PerRequest)
			body, check = r.bodies.build(numbered(r.next.Add(per)-per+1)), r.bodies.checkNew
		}
		err := r.send(ctx, c, body, check)
		r.done.Add(1)
		if started.Before(r.measureFrom) {
			continue
		}
		if err != nil {
			r.fail(err)
			continue
		}
		latencies = append(latencies, time.Since(started))
	}
	return latencies
}

// wait holds client id's request n until its turn on the schedule of
// Config.Rate, the clients' turns spread evenly; it reports false when ctx
// ends first. Without a rate there is no waiting.
func (r *runner) wait(ctx context.Context, id, n int) bool {
	if r.cfg.Rate <= 0 {
		return true
	}
	clients := float64(r.cfg.Clients)
	interval := time.Duration(float64(time.Second) * clients / r.cfg.Rate)
	at := r.start.Add(time.Duration(n)*interval + time.Duration(float64(interval)*float64(id)/clients))
	d := time.Until(at)
	if d <= 0 {
		return true
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}

// connect returns a new connection of client id's, which sends key as
// the Idempotency-Key of every request when key is not empty.
func (r *runner) connect(key string) *conn {
	headers := [][2]string{{"Authorization", "Bearer " + r.cfg.APIKey}, {"Content-Type", r.bodies.contentType()}}
	if key != "" {
		headers = append(headers, [2]string{"Idempotency-Key", key})
	}
	return newConn(r.server, r.bodies.path(), headers)
}

// send posts body on c and checks the answer with check.
func (r *runner) send(ctx context.Context, c *conn, body []byte, check func(status int, answer []byte, header http.Header) error) error {
	// An answer lists each message in about 250 bytes.
	status, answer, header, err := c.post(ctx, body, int64(4<<10+r.cfg.PerRequest*512))
	if err != nil {
		return err
	}
	return check(status, answer, header)
}

// checkReplayed checks the answer to a duplicate or a replay of a single
// message: 200, marked as a replay.
func checkReplayed(status int, answer []byte, header http.Header) error {
	if status != http.StatusOK {
		return fmt.Errorf("status %d, want %d: %.300s", status, http.StatusOK, answer)
	}
	if header.Get("Idempotent-Replayed") != "true" {
		return fmt.Errorf("status 200 without Idempotent-Replayed: %.300s", answer)
	}
	return nil
}

func (r *runner) fail(err error) {
	r.errors.Add(1)
	r.errMu.Lock()
	defer r.errMu.Unlock()
	if r.errFirst == "" {
		r.errFirst = err.Error()
	}
}

func (r *runner) firstError() string {
	r.errMu.Lock()
	defer r.errMu.Unlock()
	return r.errFirst
}

// progress prints a status line every second until the returned function
// is called.
func (r *runner) progress() (stop func()) {
	if r.cfg.Progress == nil {
		return func() {}
	}
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		tick := time.NewTicker(time.Second)
		defer tick.Stop()
		start, last := time.Now(), int64(0)
		for {
			select {
			case <-done:
				fmt.Fprintln(r.cfg.Progress)
				return
			case now := <-tick.C:
				n := r.done.Load()
				phase := "measure"
				if now.Before(r.measureFrom) {
					phase = "warm-up"
				}
				fmt.Fprintf(r.cfg.Progress, "\r  %-12s c=%-3d %-7s %4.0fs %8d requests %7d rps %5d errors",
					r.name(), r.cfg.Clients, phase, now.Sub(start).Seconds(), n, n-last, r.errors.Load())
				last = n
			}
		}
	})
	return func() { close(done); wg.Wait() }
}

// name names the run on the progress line: its mix, or its form and
// messages per request.
func (r *runner) name() string {
	if r.cfg.Form == FormEnvelope {
		return string(r.cfg.Mix)
	}
	return fmt.Sprintf("%s×%d", r.cfg.Form, r.cfg.PerRequest)
}

// sampleMemory records the server's largest resident set, sampled ten times
// a second, until the returned function is called and returns it.
func (r *runner) sampleMemory() (stop func() int64) {
	if r.cfg.ServerPID == 0 {
		return func() int64 { return 0 }
	}
	done := make(chan struct{})
	var peak int64
	var wg sync.WaitGroup
	wg.Go(func() {
		tick := time.NewTicker(100 * time.Millisecond)
		defer tick.Stop()
		for {
			if m, err := ReadMemory(r.cfg.ServerPID); err == nil {
				peak = max(peak, m.RSS)
			}
			select {
			case <-done:
				return
			case <-tick.C:
			}
		}
	})
	return func() int64 { close(done); wg.Wait(); return peak }
}

// cpuAt reads the CPU times of the run's parties at the time at, and
// returns a function that waits for that reading; without a server process
// to read, there is none.
func (r *runner) cpuAt(at time.Time) func() (CPU, error) {
	if r.cfg.ServerPID == 0 {
		return nil
	}
	var (
		cpu  CPU
		err  error
		read = make(chan struct{})
	)
	time.AfterFunc(time.Until(at), func() {
		cpu, err = readCPU(r.cfg.ServerPID, r.cfg.PostgresDatabase)
		close(read)
	})
	return func() (CPU, error) {
		<-read
		return cpu, err
	}
}

// cpuPerMessage divides the CPU used since the reading from by the
// messages measured. Requests of the warm-up still in flight when the
// measured time began add their last part to it: at most one request per
// client.
func (r *runner) cpuPerMessage(res *Result, from func() (CPU, error)) error {
	if from == nil || res.Requests == 0 {
		return nil
	}
	before, err := from()
	if err != nil {
		return err
	}
	now, err := readCPU(r.cfg.ServerPID, r.cfg.PostgresDatabase)
	if err != nil {
		return err
	}
	used := now.sub(before)
	messages := float64(res.Requests * r.cfg.PerRequest)
	perMessage := func(d time.Duration) float64 { return float64(d.Microseconds()) / messages }
	res.ServerCPU, res.PostgresCPU, res.LoadCPU = perMessage(used.Server), perMessage(used.Postgres), perMessage(used.Load)
	return nil
}
