package delivery

import "sync"

// attemptsInFlight counts, by destination, the attempts this process is
// making. A destination's queue whose limit changed is restarted only
// when none is in flight (Runner.remakeNow): River removes a queue
// only once every job of it has ended, which for a destination that hangs
// is up to the attempt timeout, and holds every other queue's start in the
// process meanwhile.
type attemptsInFlight struct {
	mu sync.Mutex
	n  map[int64]int
}

// begin counts an attempt to destinationID until the returned end is
// called.
func (a *attemptsInFlight) begin(destinationID int64) (end func()) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.n == nil {
		a.n = make(map[int64]int)
	}
	a.n[destinationID]++
	return func() {
		a.mu.Lock()
		defer a.mu.Unlock()
		if a.n[destinationID]--; a.n[destinationID] == 0 {
			delete(a.n, destinationID)
		}
	}
}

// any tells whether an attempt to destinationID is in flight.
func (a *attemptsInFlight) any(destinationID int64) bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.n[destinationID] > 0
}
