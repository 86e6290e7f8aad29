package delivery

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// A queue whose limit changed is restarted at once when none of its
// destination's attempts is in flight in the process; while one is, the
// restart waits for a later sweep, at most the attempt timeout after the
// change was first seen. A change undone meanwhile is forgotten.
func TestALimitChangeWaitsForTheAttemptsInFlight(t *testing.T) {
	t.Parallel()
	r := &Runner{timeout: 30 * time.Second, inFlight: &attemptsInFlight{}}
	seen := time.Date(2026, 12, 6, 4, 0, 0, 0, time.UTC)
	const limit = 5

	idle := &runningQueue{workers: 2}
	require.True(t, r.remakeNow(idle, 1, limit, seen), "no attempt in flight: restarted at once")

	end := r.inFlight.begin(2)
	other := r.inFlight.begin(2)
	busy := &runningQueue{workers: 2}
	require.False(t, r.remakeNow(busy, 2, limit, seen))
	require.False(t, r.remakeNow(busy, 2, limit, seen.Add(29*time.Second)), "still within the timeout of the change first seen")
	require.True(t, r.remakeNow(busy, 2, limit, seen.Add(30*time.Second)), "an attempt timeout after the change")
	require.True(t, r.remakeNow(&runningQueue{workers: 2}, 1, limit, seen), "another destination's attempts do not hold it")

	require.False(t, r.remakeNow(busy, 2, 2, seen.Add(31*time.Second)), "the limit is the workers' again")
	require.False(t, r.remakeNow(busy, 2, limit, seen.Add(40*time.Second)), "a new change is timed from when it was seen")

	end()
	require.False(t, r.remakeNow(&runningQueue{workers: 2}, 2, limit, seen), "one attempt is still in flight")
	other()
	require.True(t, r.remakeNow(&runningQueue{workers: 2}, 2, limit, seen), "the last attempt ended")
}
