package ingest

// Waiting is how many single messages wait for a group, so that tests can
// let a group form before its lane is free.
func Waiting(s *Service) int {
	s.group.mu.Lock()
	defer s.group.mu.Unlock()
	return len(s.group.waiting)
}
