package server

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"runtime"
	"testing"
	"time"

	"github.com/labstack/echo/v4"
	"github.com/stretchr/testify/require"

	"github.com/lefia/edihub/internal/metrics"
)

// share registers a share of need bytes in b.
func (b *bodyBudget) share(need int64) *bodyShare {
	s := &bodyShare{need: need}
	b.mu.Lock()
	b.shares[s] = struct{}{}
	b.mu.Unlock()
	return s
}

func TestBodyBudgetGrantsOnlySafeSteps(t *testing.T) {
	t.Parallel()
	b := newBodyBudget(100, metrics.New(nil))
	ctx := context.Background()
	a, c := b.share(100), b.share(100)
	require.NoError(t, b.grow(ctx, a, 50))
	// Giving c 50 would leave nothing free while both still need 50.
	short, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
	defer cancel()
	require.ErrorIs(t, b.grow(short, c, 50), context.DeadlineExceeded)
	require.NoError(t, b.grow(ctx, a, 50), "a can complete")
	full, cancel2 := context.WithTimeout(ctx, 50*time.Millisecond)
	defer cancel2()
	small := b.share(10)
	require.ErrorIs(t, b.grow(full, small, 10), context.DeadlineExceeded, "nothing is free")
}

// A body read in doubling steps takes each step's buffer from those that
// earlier bodies outgrew, so that once warm, reading a batch of 225 KB
// allocates about the body and not its steps too (2.2 × without them). The
// race detector, which make test runs with, drops a quarter of what goes
// back to a pool, so about 1.3 × is allocated then.
func TestBodyStepsAreReused(t *testing.T) {
	b := newBodyBudget(1<<30, metrics.New(nil))
	body := bytes.Repeat([]byte("0123456789"), 22_500)
	read := func() {
		c := echo.New().NewContext(httptest.NewRequest(http.MethodPost, "/", nil), httptest.NewRecorder())
		s := b.share(0)
		c.Set(bodyBudgetKey, s)
		defer b.leave(s)
		got, err := b.read(c, bytes.NewReader(body), int64(len(body)), 1)
		require.NoError(t, err)
		require.Equal(t, body, got)
	}
	read()
	const runs = 20
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	for range runs {
		read()
	}
	runtime.ReadMemStats(&after)
	perRead := float64(after.TotalAlloc-before.TotalAlloc) / runs
	require.Less(t, perRead/float64(len(body)), 1.75, "bytes allocated a read of %d bytes: %.0f", len(body), perRead)
}
