package ingest

// Waiting is how many single messages wait for a group, so that tests can
// let a group form before its lane is free.
func Waiting(s *Service) int {
	n := 0
	for _, c := range []*committer{s.groups.stores, s.groups.retransmissions, s.groups.replays} {
		c.mu.Lock()
		n += len(c.waiting)
		c.mu.Unlock()
	}
	return n
}

// HoldQuickLanes takes the lanes of the committers of replays and of
// retransmissions, idle until then, as their leaders would, so that
// requests of those kinds queue for their next groups; release hands each
// lane on as a leader does when its group has committed, to a goroutine
// that leads the queued groups.
func HoldQuickLanes(s *Service) (release func()) {
	quick := []*committer{s.groups.retransmissions, s.groups.replays}
	for _, c := range quick {
		c.mu.Lock()
		c.leading = c.lanes
		c.mu.Unlock()
	}
	return func() {
		for _, c := range quick {
			for range c.lanes {
				c.handOn()
			}
		}
	}
}
