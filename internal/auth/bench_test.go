package auth_test

import (
	"context"
	"fmt"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/lefia/edihub/internal/auth"
	"github.com/lefia/edihub/internal/pgtest"
	"github.com/lefia/edihub/internal/testfactory"
)

// BenchmarkConcurrentWrongSignIns sends 24 wrong passwords at once for one
// account from one address and reports the heap's peak above its level
// before (peak-MiB) and how many passwords were checked (checks), which
// the failed sign-ins recorded in the audit trail count.
func BenchmarkConcurrentWrongSignIns(b *testing.B) {
	ctx := context.Background()
	pool := pgtest.Pool(b)
	svc := auth.New(pool)
	var peak, checks float64
	for i := 0; b.Loop(); i++ {
		// An account and address of its own per round, unthrottled.
		b.StopTimer()
		email, addr := fmt.Sprintf("ada%d@acme.example", i), fmt.Sprintf("192.0.2.%d", i%250)
		testfactory.User(b, pool, &testfactory.UserOpts{Email: email})
		b.StartTimer()
		runtime.GC()
		var base runtime.MemStats
		runtime.ReadMemStats(&base)
		stop := make(chan struct{})
		sampled := make(chan uint64)
		go func() {
			var m runtime.MemStats
			var top uint64
			for {
				runtime.ReadMemStats(&m)
				top = max(top, m.HeapInuse)
				select {
				case <-stop:
					sampled <- top
					return
				case <-time.After(2 * time.Millisecond):
				}
			}
		}()
		var wg sync.WaitGroup
		for range 24 {
			wg.Go(func() { _, _ = svc.Login(ctx, email, "wrong password, long enough", addr) })
		}
		wg.Wait()
		close(stop)
		peak = max(peak, float64(<-sampled-base.HeapInuse)/(1<<20))
		var n int
		require.NoError(b, pool.QueryRow(ctx, `SELECT count(*) FROM audit_events
			WHERE action = 'user.login_failed' AND details->>'email' = $1`, email).Scan(&n))
		checks = float64(n)
	}
	b.ReportMetric(peak, "peak-MiB")
	b.ReportMetric(checks, "checks")
}
