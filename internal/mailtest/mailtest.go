// Package mailtest is a real SMTP server on loopback for tests: it keeps
// what it receives, so that a test can count and read the mails edihub
// sent. Tests only import it.
package mailtest

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"io"
	"net"
	"net/http/httptest"
	"sync"
	"testing"

	"github.com/emersion/go-sasl"
	"github.com/emersion/go-smtp"
	"github.com/stretchr/testify/require"
)

// Server is an SMTP server that keeps what it receives: PLAIN sign-in as
// user/secret when asked for, a refusal of recipients at refused.example,
// and, when started with Start or StartImplicitTLS, TLS with a test
// certificate that Roots trusts.
type Server struct {
	Addr  string
	Roots *x509.CertPool

	mu     sync.Mutex
	mails  []Mail
	authed bool
}

// Mail is one mail received.
type Mail struct {
	From, To string
	Data     string
	TLS      bool
}

// Start starts a server that offers STARTTLS, stopped when the test ends.
func Start(t testing.TB) *Server { return startTLS(t, false) }

// StartImplicitTLS starts a server that speaks TLS from the start
// (smtps), stopped when the test ends.
func StartImplicitTLS(t testing.TB) *Server { return startTLS(t, true) }

func startTLS(t testing.TB, implicit bool) *Server {
	t.Helper()
	// httptest's certificate names 127.0.0.1, where the server listens.
	certs := httptest.NewTLSServer(nil)
	t.Cleanup(certs.Close)
	m := &Server{Roots: x509.NewCertPool()}
	m.Roots.AddCert(certs.Certificate())
	m.serve(t, &tls.Config{Certificates: certs.TLS.Certificates}, implicit)
	return m
}

// StartPlain starts a server that offers no TLS, for senders that do not
// know its test certificate; stopped when the test ends.
func StartPlain(t testing.TB) *Server {
	t.Helper()
	m := &Server{}
	m.serve(t, nil, false)
	return m
}

// serve serves on loopback until the test ends: TLS from the start when
// implicit, else STARTTLS when tlsConfig is set, else plain.
func (m *Server) serve(t testing.TB, tlsConfig *tls.Config, implicit bool) {
	t.Helper()
	s := smtp.NewServer(smtp.BackendFunc(func(c *smtp.Conn) (smtp.Session, error) {
		return &session{server: m, conn: c}, nil
	}))
	s.Domain = "localhost"
	s.TLSConfig = tlsConfig
	s.AllowInsecureAuth = tlsConfig == nil
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	m.Addr = ln.Addr().String()
	if implicit {
		ln = tls.NewListener(ln, tlsConfig)
	}
	go func() { _ = s.Serve(ln) }()
	t.Cleanup(func() { _ = s.Close() })
}

// Received returns the mails received so far.
func (m *Server) Received() []Mail {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]Mail(nil), m.mails...)
}

// Authenticated reports whether a client signed in.
func (m *Server) Authenticated() bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.authed
}

type session struct {
	server   *Server
	conn     *smtp.Conn
	from, to string
}

func (s *session) AuthMechanisms() []string { return []string{sasl.Plain} }

func (s *session) Auth(string) (sasl.Server, error) {
	return sasl.NewPlainServer(func(_, user, pass string) error {
		if user != "user" || pass != "secret" {
			return errors.New("invalid credentials")
		}
		s.server.mu.Lock()
		s.server.authed = true
		s.server.mu.Unlock()
		return nil
	}), nil
}

func (s *session) Mail(from string, _ *smtp.MailOptions) error { s.from = from; return nil }

func (s *session) Rcpt(to string, _ *smtp.RcptOptions) error {
	if to == "ops@refused.example" {
		return &smtp.SMTPError{Code: 550, EnhancedCode: smtp.EnhancedCode{5, 1, 1}, Message: "no such mailbox"}
	}
	s.to = to
	return nil
}

func (s *session) Data(r io.Reader) error {
	data, err := io.ReadAll(r)
	if err != nil {
		return err
	}
	_, tlsOn := s.conn.TLSConnectionState()
	s.server.mu.Lock()
	defer s.server.mu.Unlock()
	s.server.mails = append(s.server.mails, Mail{From: s.from, To: s.to, Data: string(data), TLS: tlsOn})
	return nil
}

func (s *session) Reset()        {}
func (s *session) Logout() error { return nil }
