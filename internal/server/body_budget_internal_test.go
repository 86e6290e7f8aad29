package server

import (
	"context"
	"testing"
	"time"

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
