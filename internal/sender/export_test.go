package sender

import "time"

// SetClock makes the cache read the time from now, so that tests move
// past the TTL without waiting for it.
func (s *Service) SetClock(now func() time.Time) { s.callers.now = now }

// CachedKeys is how many keys the cache holds.
func (s *Service) CachedKeys() int {
	s.callers.mu.Lock()
	defer s.callers.mu.Unlock()
	return len(s.callers.entries)
}
