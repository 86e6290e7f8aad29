package delivery_test

import (
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/lefia/edihub/internal/delivery"
	"github.com/lefia/edihub/internal/provision"
)

// The delivery benchmarks. Run them with a fixed count, -benchtime=2000x
// (BenchmarkDeliverySlowReceiver: 200x), since each stores b.N messages
// and times them end to end; docs/performance.md has the results.

// benchLimits are the concurrency limits BenchmarkDelivery compares: the
// default, and more places for a receiver that answers at once.
var benchLimits = []int32{provision.DefaultMaxConcurrency, 4, 8, 16, 32}

// BenchmarkDelivery stores b.N messages from 8 concurrent clients, as fast
// as ingest takes them, each owed to one destination (a local receiver
// answering at once), while one worker process delivers them, at several
// concurrency limits. It reports what intakeRun.report does, the lag being
// from each message's ingest answer to its first attempt arriving at the
// receiver, and the connections the receiver accepted.
func BenchmarkDelivery(b *testing.B) {
	seen := map[int32]bool{}
	for _, limit := range benchLimits {
		if seen[limit] {
			continue
		}
		seen[limit] = true
		b.Run(fmt.Sprintf("limit=%d", limit), func(b *testing.B) {
			tb := setup(b)
			rc := newReceiver(b, nil)
			destination := tb.limitedDestination(b, rc.srv.URL, limit)
			tb.startForBench(b)
			r := tb.intake(b, 0, func(i int) string { return "ORDERS05" })
			r.report(b, rc, destination, nil)
			b.ReportMetric(float64(rc.conns.Load()), "conns")
		})
	}
}

// BenchmarkDeliveryPaced is BenchmarkDelivery at the default limit with
// intake held at a fixed rate below what delivery sustains: the lag a
// destination sees in steady operation.
func BenchmarkDeliveryPaced(b *testing.B) {
	for _, rate := range []int{250, 500} {
		b.Run(fmt.Sprintf("rate=%d", rate), func(b *testing.B) {
			tb := setup(b)
			rc := newReceiver(b, nil)
			destination := tb.limitedDestination(b, rc.srv.URL, provision.DefaultMaxConcurrency)
			tb.startForBench(b)
			r := tb.intake(b, rate, func(i int) string { return "ORDERS05" })
			r.report(b, rc, destination, nil)
		})
	}
}

// BenchmarkDeliverySlowReceiver stores b.N messages for a destination that
// takes 200 ms to answer each, then measures how fast one worker process
// delivers them: the limit's number of places over 200 ms is the most it
// can be (expected/s), and the ratio says how close it comes.
func BenchmarkDeliverySlowReceiver(b *testing.B) {
	const answerTime = 200 * time.Millisecond
	for _, limit := range []int32{provision.DefaultMaxConcurrency, 32} {
		b.Run(fmt.Sprintf("limit=%d", limit), func(b *testing.B) {
			tb := setup(b)
			rc := newReceiver(b, func(*http.Request) int {
				time.Sleep(answerTime)
				return http.StatusOK
			})
			tb.limitedDestination(b, rc.srv.URL, limit)
			for i := range b.N {
				tb.receive(b, "production", "ORDERS05", strconv.Itoa(i))
			}
			b.ResetTimer()
			tb.run(b)
			require.Eventually(b, func() bool { return rc.total() >= b.N }, 10*time.Minute, 10*time.Millisecond)
			b.StopTimer()
			first, last := rc.span()
			// Deliveries from the first request's arrival to the last
			// answer: the worker's start-up is not the limit's.
			rate := float64(b.N) / last.Sub(first).Seconds()
			expected := float64(limit) / answerTime.Seconds()
			b.ReportMetric(rate, "deliveries/s")
			b.ReportMetric(expected, "expected/s")
			b.ReportMetric(rate/expected, "ratio")
			b.ReportMetric(0, "ns/op")
		})
	}
}

// BenchmarkDeliverySlowBesideFast stores b.N messages from 8 clients, every
// other one of a type that only a second destination takes, and measures
// the first destination (answering at once) and ingest while the second
// answers at once too (beside=fast), takes 200 ms per request (slow) or
// fails every attempt (failing). The first destination's deliveries/s and
// lag, and the stored/s, must not depend on the second.
func BenchmarkDeliverySlowBesideFast(b *testing.B) {
	answers := map[string]func(*http.Request) int{
		"fast": nil,
		"slow": func(*http.Request) int {
			time.Sleep(200 * time.Millisecond)
			return http.StatusOK
		},
		"failing": func(*http.Request) int { return http.StatusInternalServerError },
	}
	for _, beside := range []string{"fast", "slow", "failing"} {
		b.Run("beside="+beside, func(b *testing.B) {
			tb := setup(b)
			fast, other := newReceiver(b, nil), newReceiver(b, answers[beside])
			destination := tb.destination(b, "production", fast.srv.URL, "ORDERS05")
			tb.destination(b, "production", other.srv.URL, "INVOIC02")
			tb.startForBench(b)
			r := tb.intake(b, 0, func(i int) string {
				if i%2 == 1 {
					return "INVOIC02"
				}
				return "ORDERS05"
			})
			r.report(b, fast, destination, func(i int) bool { return i%2 == 0 })
		})
	}
}

// BenchmarkDeliveryIdleDestinations runs one worker process for 1,000
// destinations of which only one gets messages (others=999), or for that
// one alone (others=0): the connections the process takes from its pools
// per second while every destination is idle, then a burst of b.N
// messages to the one destination from 8 clients, whose lag must not
// depend on the others.
func BenchmarkDeliveryIdleDestinations(b *testing.B) {
	for _, others := range []int{0, 999} {
		b.Run(fmt.Sprintf("others=%d", others), func(b *testing.B) {
			tb := setup(b)
			rc := newReceiver(b, nil)
			destination := tb.limitedDestination(b, rc.srv.URL, provision.DefaultMaxConcurrency)
			tb.exec(b, `INSERT INTO destinations (tenant_id, environment_id, url, secret)
				SELECT $1, $2, $3, $4 FROM generate_series(1, $5::int)`,
				tb.tenantID, tb.envs["sandbox"], rc.srv.URL, testSecret, others)
			runner, pool := tb.startRunner(b)
			acquires := func() int64 { return pool.Stat().AcquireCount() + runner.AcquireCount() }
			time.Sleep(3 * tb.cfg.SyncInterval)
			before := acquires()
			const idle = 3 * time.Second
			time.Sleep(idle)
			idleAcquires := float64(acquires()-before) / idle.Seconds()
			r := tb.intake(b, 0, func(i int) string { return "ORDERS05" })
			r.report(b, rc, destination, nil)
			b.ReportMetric(idleAcquires, "idle-acquires/s")
		})
	}
}

// BenchmarkDeliveryDrain stores b.N messages first and then measures how
// fast one worker process delivers them to a local receiver at the default
// limit: the delivery side alone, without ingest competing for the machine.
func BenchmarkDeliveryDrain(b *testing.B) {
	tb := setup(b)
	rc := newReceiver(b, nil)
	tb.limitedDestination(b, rc.srv.URL, provision.DefaultMaxConcurrency)
	for i := range b.N {
		tb.receive(b, "production", "ORDERS05", strconv.Itoa(i))
	}
	b.ResetTimer()
	start := time.Now()
	tb.run(b)
	require.Eventually(b, func() bool { return rc.total() >= b.N }, 5*time.Minute, 10*time.Millisecond)
	b.StopTimer()
	b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "deliveries/s")
	b.ReportMetric(0, "ns/op")
}

// startForBench starts a worker process and lets it settle before the
// clock starts.
func (tb *testBundle) startForBench(b *testing.B) {
	tb.run(b)
	time.Sleep(3 * tb.cfg.SyncInterval)
}

// intakeRun is when each message of an intake was answered, and its id.
type intakeRun struct {
	start    time.Time
	answered []time.Time
	ids      []int64
}

// intake stores b.N messages, of the type typeOf(i) each, from 8
// concurrent clients: as fast as ingest answers (rate 0), or the i-th no
// sooner than i/rate seconds after the start. It resets the timer first.
func (tb *testBundle) intake(b *testing.B, rate int, typeOf func(i int) string) *intakeRun {
	r := &intakeRun{answered: make([]time.Time, b.N), ids: make([]int64, b.N)}
	next := make(chan int)
	var wg sync.WaitGroup
	b.ResetTimer()
	r.start = time.Now()
	for range 8 {
		wg.Go(func() {
			for i := range next {
				res := tb.receive(b, "production", typeOf(i), strconv.Itoa(i))
				r.answered[i], r.ids[i] = time.Now(), res.MessageID
			}
		})
	}
	for i := range b.N {
		if rate > 0 {
			time.Sleep(time.Until(r.start.Add(time.Duration(i) * time.Second / time.Duration(rate))))
		}
		next <- i
	}
	close(next)
	wg.Wait()
	return r
}

// report waits until rc has received every message of the run owed to
// destination (owedTo(i), nil: every one), stops the timer and reports
// stored/s, from the start to the last answer (every message);
// deliveries/s, from the first delivery's arrival to the last one's; their
// ratio, with stored/s counting only the messages owed to destination (at
// least 1: delivery keeps up with intake); the deliveries still to arrive
// when the last message was stored (behind: a backlog that grew shows
// here); and the lag p50 and p99 of the messages rc received.
func (r *intakeRun) report(b *testing.B, rc *receiver, destination int64, owedTo func(i int) bool) {
	var owed []int
	for i := range r.ids {
		if owedTo == nil || owedTo(i) {
			owed = append(owed, i)
		}
	}
	require.Eventually(b, func() bool { return rc.total() >= len(owed) }, 10*time.Minute, 10*time.Millisecond)
	b.StopTimer()

	rc.mu.Lock()
	defer rc.mu.Unlock()
	lags := make([]time.Duration, 0, len(owed))
	var first, last time.Time
	for _, i := range owed {
		at, ok := rc.first[delivery.WebhookID(r.ids[i], destination)]
		require.True(b, ok, "message %d reached its destination", r.ids[i])
		lags = append(lags, at.Sub(r.answered[i]))
		if first.IsZero() || at.Before(first) {
			first = at
		}
		if at.After(last) {
			last = at
		}
	}
	slices.Sort(lags)
	stored := slices.MaxFunc(r.answered, func(x, y time.Time) int { return x.Compare(y) })
	behind := 0
	for _, i := range owed {
		if rc.first[delivery.WebhookID(r.ids[i], destination)].After(stored) {
			behind++
		}
	}
	storedRate := float64(len(r.answered)) / stored.Sub(r.start).Seconds()
	deliveryRate := float64(len(owed)) / last.Sub(first).Seconds()
	b.ReportMetric(storedRate, "stored/s")
	b.ReportMetric(deliveryRate, "deliveries/s")
	b.ReportMetric(deliveryRate/(storedRate*float64(len(owed))/float64(len(r.answered))), "delivered÷stored")
	b.ReportMetric(float64(behind), "behind")
	b.ReportMetric(float64(lags[len(lags)/2].Microseconds())/1000, "p50-lag-ms")
	b.ReportMetric(float64(lags[len(lags)*99/100].Microseconds())/1000, "p99-lag-ms")
	b.ReportMetric(float64(lags[len(lags)-1].Microseconds())/1000, "max-lag-ms")
	b.ReportMetric(0, "ns/op")
}
