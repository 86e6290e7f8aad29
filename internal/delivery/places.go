package delivery

import (
	"slices"
	"sync"
)

// places are the jobs of this process that wait for a place of their
// destination, in arrival order. An attempt that ends hands its place to
// the first of them in the statement that records it (DeliveryRecord), so
// that the waiting job, loaded already, makes its attempt at once, with no
// transaction of its own to take the place.
type places struct {
	mu      sync.Mutex
	waiting map[int64][]*placeWaiter // by destination
}

// placeWaiter is a job waiting for a place of its destination.
type placeWaiter struct {
	deliveryID int64
	// handed receives, once the waiter has been picked, whether the place
	// was handed on to it; it has room for the answer, so that whoever
	// answers never waits.
	handed chan bool
}

// wait queues the job of deliveryID for a place of destinationID.
func (p *places) wait(destinationID, deliveryID int64) *placeWaiter {
	w := &placeWaiter{deliveryID: deliveryID, handed: make(chan bool, 1)}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.waiting == nil {
		p.waiting = map[int64][]*placeWaiter{}
	}
	p.waiting[destinationID] = append(p.waiting[destinationID], w)
	return w
}

// next picks the first job waiting for a place of destinationID, if any;
// it is then told on its handed channel whether it got the place.
func (p *places) next(destinationID int64) *placeWaiter {
	p.mu.Lock()
	defer p.mu.Unlock()
	queue := p.waiting[destinationID]
	if len(queue) == 0 {
		return nil
	}
	w := queue[0]
	p.dropFirst(destinationID, 0)
	return w
}

// leave takes w out of the queue, reporting false when an attempt has
// picked it already: its answer is then on the way.
func (p *places) leave(destinationID int64, w *placeWaiter) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	i := slices.Index(p.waiting[destinationID], w)
	if i < 0 {
		return false
	}
	p.dropFirst(destinationID, i)
	return true
}

// dropFirst removes the i-th waiter of destinationID, and the queue when
// it is empty. The caller holds p.mu.
func (p *places) dropFirst(destinationID int64, i int) {
	queue := slices.Delete(p.waiting[destinationID], i, i+1)
	if len(queue) == 0 {
		delete(p.waiting, destinationID)
		return
	}
	p.waiting[destinationID] = queue
}
