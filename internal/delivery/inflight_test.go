package delivery

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// A queue whose limit changed is restarted at once when none of its
// destination's attempts is in flight in the process; while one is, the
// restart waits for a later sweep, at most the attempt timeout after the
// change was first seen.
func TestALimitChangeWaitsForTheAttemptsInFlight(t *testing.T) {
	t.Parallel()
	r := &Runner{timeout: 30 * time.Second, inFlight: &attemptsInFlight{}}
	seen := time.Date(2026, 12, 6, 4, 0, 0, 0, time.UTC)

	idle := &runningQueue{}
	require.False(t, r.restartDeferred(idle, 1, seen), "no attempt in flight: restarted at once")

	end := r.inFlight.begin(2)
	other := r.inFlight.begin(2)
	busy := &runningQueue{}
	require.True(t, r.restartDeferred(busy, 2, seen))
	require.True(t, r.restartDeferred(busy, 2, seen.Add(29*time.Second)), "still within the timeout of the change first seen")
	require.False(t, r.restartDeferred(busy, 2, seen.Add(30*time.Second)), "an attempt timeout after the change")
	require.False(t, r.restartDeferred(&runningQueue{}, 1, seen), "another destination's attempts do not hold it")

	end()
	require.True(t, r.restartDeferred(&runningQueue{}, 2, seen), "one attempt is still in flight")
	other()
	require.False(t, r.restartDeferred(&runningQueue{}, 2, seen), "the last attempt ended")
}
