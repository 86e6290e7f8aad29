package backoff_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/lefia/edihub/internal/backoff"
)

func TestJitteredDoublesUpToTheCeilingWithinHalfAndAll(t *testing.T) {
	t.Parallel()
	base, ceiling := 30*time.Second, time.Hour
	for attempt, want := range map[int]time.Duration{
		0: base, 1: base, 2: 2 * base, 3: 4 * base, 7: 64 * base, 8: ceiling, 40: ceiling, 1000: ceiling,
	} {
		for range 50 {
			got := backoff.Jittered(base, ceiling, attempt)
			require.GreaterOrEqual(t, got, want/2, "attempt %d", attempt)
			require.LessOrEqual(t, got, want, "attempt %d", attempt)
		}
	}
}
