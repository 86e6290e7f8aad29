package notify

import "crypto/x509"

// TrustingMailServer returns s checking the mail server's certificate
// against roots, a test server's.
func (s *Sender) TrustingMailServer(roots *x509.CertPool) *Sender {
	c := *s
	c.mail.roots = roots
	return &c
}
