package delivery

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestPlacesHandOnToWaitersInArrivalOrder(t *testing.T) {
	var p places
	require.Nil(t, p.next(1), "no job waits yet")
	first, second := p.wait(1, 10), p.wait(1, 11)
	other := p.wait(2, 20)

	require.Same(t, first, p.next(1))
	require.Same(t, second, p.next(1))
	require.Nil(t, p.next(1), "each waiter is picked once")
	require.Same(t, other, p.next(2), "destinations queue apart")
}

func TestAWaiterThatLeavesIsNotPickedAndOnePickedCannotLeave(t *testing.T) {
	var p places
	gone, stays := p.wait(1, 10), p.wait(1, 11)
	require.True(t, p.leave(1, gone))
	require.Same(t, stays, p.next(1), "the waiter that left is passed over")
	require.False(t, p.leave(1, stays), "a picked waiter's answer is on its way, so it cannot leave")
	require.Empty(t, p.waiting, "empty queues are dropped")
}
