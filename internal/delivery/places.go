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
//
// A place given back to the database instead (no job waited when its
// attempt was recorded) must not be missed by a job that looked for one
// just before and queues just after: returns counts the places given back
// per destination, a job notes the count before it looks and queues only
// when it has not moved, and a place given back wakes the first job queued
// meanwhile to look again.
type places struct {
	mu      sync.Mutex
	waiting map[int64][]*placeWaiter // by destination
	returns map[int64]uint64         // by destination
}

// placeWaiter is a job waiting for a place of its destination.
type placeWaiter struct {
	deliveryID int64
	// handed receives, once the waiter has been picked, whether the place
	// was handed on to it; it has room for the answer, so that whoever
	// answers never waits.
	handed chan bool
}

// returned is the count of places of destinationID given back so far, to
// note before looking for one.
func (p *places) returned(destinationID int64) uint64 {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.returns[destinationID]
}

// wait queues the job of deliveryID for a place of destinationID, unless a
// place was given back since the job noted seen (it then reports nil: the
// job looks again).
func (p *places) wait(destinationID, deliveryID int64, seen uint64) *placeWaiter {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.returns[destinationID] != seen {
		return nil
	}
	w := &placeWaiter{deliveryID: deliveryID, handed: make(chan bool, 1)}
	if p.waiting == nil {
		p.waiting = map[int64][]*placeWaiter{}
	}
	p.waiting[destinationID] = append(p.waiting[destinationID], w)
	return w
}

// giveBack counts a place of destinationID given back to the database, and
// wakes the first job queued for one, if any, to look again.
func (p *places) giveBack(destinationID int64) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.returns == nil {
		p.returns = map[int64]uint64{}
	}
	p.returns[destinationID]++
	if w := p.first(destinationID); w != nil {
		w.handed <- false
	}
}

// next picks the first job waiting for a place of destinationID, if any;
// it is then told on its handed channel whether it got the place.
func (p *places) next(destinationID int64) *placeWaiter {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.first(destinationID)
}

// first takes the first job waiting for a place of destinationID out of
// the queue, if any. The caller holds p.mu.
func (p *places) first(destinationID int64) *placeWaiter {
	queue := p.waiting[destinationID]
	if len(queue) == 0 {
		return nil
	}
	w := queue[0]
	p.drop(destinationID, 0)
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
	p.drop(destinationID, i)
	return true
}

// drop removes the i-th waiter of destinationID, and the queue when
// it is empty. The caller holds p.mu.
func (p *places) drop(destinationID int64, i int) {
	queue := slices.Delete(p.waiting[destinationID], i, i+1)
	if len(queue) == 0 {
		delete(p.waiting, destinationID)
		return
	}
	p.waiting[destinationID] = queue
}
