package server

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// One user holds at most heavyPerUser places; past them the user is told
// to wait (429), and past the process's places anyone is (503). Places
// given back are taken again, and a user holding none is forgotten.
func TestHeavyWorkPlaces(t *testing.T) {
	t.Parallel()
	h := &heavyWork{all: make(chan struct{}, 3), wait: 20 * time.Millisecond, users: map[int64]*userPlaces{}}
	ctx := context.Background()
	var releases []func()
	for range heavyPerUser {
		release, err := h.enter(ctx, 1)
		require.NoError(t, err)
		releases = append(releases, release)
	}
	_, err := h.enter(ctx, 1)
	require.Equal(t, errHeavyPerUser, err)

	release, err := h.enter(ctx, 2)
	require.NoError(t, err, "another user is not held back by the first")
	releases = append(releases, release)
	_, err = h.enter(ctx, 3)
	require.Equal(t, errHeavyBusy, err, "the process's places are taken")

	ended, cancel := context.WithCancel(ctx)
	cancel()
	_, err = h.enter(ended, 3)
	require.ErrorIs(t, err, context.Canceled, "a request that ended is not told to wait")

	for _, release := range releases {
		release()
	}
	require.Empty(t, h.users)
	release, err = h.enter(ctx, 1)
	require.NoError(t, err)
	release()
}
