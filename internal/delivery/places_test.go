package delivery

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestPlacesHandOnToWaitersInArrivalOrder(t *testing.T) {
	var p places
	require.Nil(t, p.next(1), "no job waits yet")
	first, second := p.wait(1, 10, 0), p.wait(1, 11, 0)
	other := p.wait(2, 20, 0)

	require.Same(t, first, p.next(1))
	require.Same(t, second, p.next(1))
	require.Nil(t, p.next(1), "each waiter is picked once")
	require.Same(t, other, p.next(2), "destinations queue apart")
}

func TestAWaiterThatLeavesIsNotPickedAndOnePickedCannotLeave(t *testing.T) {
	var p places
	gone, stays := p.wait(1, 10, 0), p.wait(1, 11, 0)
	require.True(t, p.leave(1, gone))
	require.Same(t, stays, p.next(1), "the waiter that left is passed over")
	require.False(t, p.leave(1, stays), "a picked waiter's answer is on its way, so it cannot leave")
	require.Empty(t, p.waiting, "empty queues are dropped")
}

// A place given back to the database is never missed by a job that looked
// just before: one that queues afterwards is told to look again, and one
// queued already is woken.
func TestAPlaceGivenBackIsNotMissed(t *testing.T) {
	var p places
	seen := p.returned(1)
	queued := p.wait(1, 10, seen)
	p.giveBack(1)
	require.False(t, <-queued.handed, "the queued job is woken to look again")
	require.Nil(t, p.next(1), "and no longer queued")

	require.Nil(t, p.wait(1, 11, seen), "a job that looked before the place was given back looks again")
	require.NotNil(t, p.wait(1, 12, p.returned(1)), "one that looked after it queues")
	require.NotNil(t, p.wait(2, 20, 0), "other destinations' places are counted apart")
}
