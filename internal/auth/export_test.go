package auth

// SetPasswordCheck replaces the password check of s, so that tests can
// count the checks and how many run at once.
func SetPasswordCheck(s *Service, check func(pw, hash string) error) { s.checkPassword = check }
