package notify_test

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

// mailServer is a real SMTP server on loopback that keeps what it receives:
// STARTTLS with a test certificate (Roots trusts it), PLAIN sign-in as
// user/secret when asked for, and a refusal of recipients at refused.example.
type mailServer struct {
	Addr  string
	Roots *x509.CertPool

	mu     sync.Mutex
	mails  []receivedMail
	authed bool
}

type receivedMail struct {
	From, To string
	Data     string
	TLS      bool
}

func startMailServer(t testing.TB) *mailServer { return startMailServerOn(t, false) }

// startMailServerOn starts a mail server that speaks TLS from the start
// (smtps) when implicitTLS, else one that offers STARTTLS.
func startMailServerOn(t testing.TB, implicitTLS bool) *mailServer {
	t.Helper()
	// httptest's certificate names 127.0.0.1, where the server listens.
	certs := httptest.NewTLSServer(nil)
	t.Cleanup(certs.Close)
	m := &mailServer{Roots: x509.NewCertPool()}
	m.Roots.AddCert(certs.Certificate())
	s := smtp.NewServer(smtp.BackendFunc(func(c *smtp.Conn) (smtp.Session, error) {
		return &mailSession{server: m, conn: c}, nil
	}))
	s.Domain = "localhost"
	s.TLSConfig = &tls.Config{Certificates: certs.TLS.Certificates}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	if implicitTLS {
		ln = tls.NewListener(ln, s.TLSConfig)
	}
	m.Addr = ln.Addr().String()
	go func() { _ = s.Serve(ln) }()
	t.Cleanup(func() { _ = s.Close() })
	return m
}

func (m *mailServer) received() []receivedMail {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]receivedMail(nil), m.mails...)
}

type mailSession struct {
	server   *mailServer
	conn     *smtp.Conn
	from, to string
}

func (s *mailSession) AuthMechanisms() []string { return []string{sasl.Plain} }

func (s *mailSession) Auth(string) (sasl.Server, error) {
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

func (s *mailSession) Mail(from string, _ *smtp.MailOptions) error { s.from = from; return nil }

func (s *mailSession) Rcpt(to string, _ *smtp.RcptOptions) error {
	if to == "ops@refused.example" {
		return &smtp.SMTPError{Code: 550, EnhancedCode: smtp.EnhancedCode{5, 1, 1}, Message: "no such mailbox"}
	}
	s.to = to
	return nil
}

func (s *mailSession) Data(r io.Reader) error {
	data, err := io.ReadAll(r)
	if err != nil {
		return err
	}
	_, tlsOn := s.conn.TLSConnectionState()
	s.server.mu.Lock()
	defer s.server.mu.Unlock()
	s.server.mails = append(s.server.mails, receivedMail{From: s.from, To: s.to, Data: string(data), TLS: tlsOn})
	return nil
}

func (s *mailSession) Reset()        {}
func (s *mailSession) Logout() error { return nil }
