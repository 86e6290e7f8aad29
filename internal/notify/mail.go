package notify

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"encoding/hex"
	"errors"
	"fmt"
	"mime"
	"mime/quotedprintable"
	"net"
	"net/smtp"
	"net/textproto"
	"time"

	"github.com/lefia/edihub/internal/config"
	"github.com/lefia/edihub/internal/identifier"
)

// mailer sends email through the server of SMTP_URL. The server is the
// operator's, not a tenant's, so the egress policy does not apply to it.
// net/smtp is enough: one message to one address, with the server's final
// reply kept as the channel's answer.
type mailer struct {
	server  config.SMTP
	from    string
	timeout time.Duration
	// roots are the certificate authorities the server's certificate is
	// checked against; nil: the system's.
	roots *x509.CertPool
}

func (ml mailer) tlsConfig() *tls.Config {
	return &tls.Config{ServerName: ml.server.Host, RootCAs: ml.roots, MinVersion: tls.VersionTLS12}
}

// errNoSMTP is an email notification with no server to send it through.
var errNoSMTP = errors.New("no mail server is configured: set SMTP_URL and SMTP_FROM")

// send delivers m to the address to and returns the server's reply to the
// message: STARTTLS when the server offers it (smtp://), TLS from the start
// for smtps://, and the credentials of SMTP_URL, which net/smtp sends only
// over TLS or to a server on loopback.
func (ml mailer) send(ctx context.Context, to string, m message) Answer {
	if !ml.server.Configured() {
		return Answer{Err: errNoSMTP}
	}
	conn, err := ml.dial(ctx)
	if err != nil {
		return Answer{Err: fmt.Errorf("connect to the mail server: %w", err)}
	}
	// Closing the connection ends the client's too, after STARTTLS as well.
	defer func() { _ = conn.Close() }()
	// The deadline bounds every exchange with a server that stops answering;
	// net/smtp takes no context.
	deadline, _ := ctx.Deadline()
	if err := conn.SetDeadline(deadline); err != nil {
		return Answer{Err: err}
	}
	c, err := smtp.NewClient(conn, ml.server.Host)
	if err != nil {
		return smtpAnswer(fmt.Errorf("greeting: %w", err))
	}
	if ok, _ := c.Extension("STARTTLS"); ok && !ml.server.ImplicitTLS {
		if err := c.StartTLS(ml.tlsConfig()); err != nil {
			return smtpAnswer(fmt.Errorf("STARTTLS: %w", err))
		}
	}
	if ml.server.Username != "" {
		if err := c.Auth(smtp.PlainAuth("", ml.server.Username, ml.server.Password, ml.server.Host)); err != nil {
			return smtpAnswer(fmt.Errorf("sign in to the mail server: %w", err))
		}
	}
	from, err := envelopeAddress(ml.from)
	if err != nil {
		return Answer{Err: err}
	}
	if err := c.Mail(from); err != nil {
		return smtpAnswer(fmt.Errorf("MAIL FROM: %w", err))
	}
	if err := c.Rcpt(to); err != nil {
		return smtpAnswer(fmt.Errorf("RCPT TO: %w", err))
	}
	reply, err := data(c, ml.compose(to, m))
	if err != nil {
		return smtpAnswer(fmt.Errorf("DATA: %w", err))
	}
	// The message is the server's once it replied to DATA; a failed QUIT
	// changes nothing.
	_ = c.Quit()
	return Answer{Said: reply}
}

func (ml mailer) dial(ctx context.Context) (net.Conn, error) {
	addr := net.JoinHostPort(ml.server.Host, ml.server.Port)
	if ml.server.ImplicitTLS {
		d := tls.Dialer{Config: ml.tlsConfig()}
		return d.DialContext(ctx, "tcp", addr)
	}
	var d net.Dialer
	return d.DialContext(ctx, "tcp", addr)
}

// data sends the message and returns the server's reply to it, the one
// that says whether it took it; net/smtp's Data discards that reply's text.
func data(c *smtp.Client, msg []byte) (string, error) {
	id, err := c.Text.Cmd("DATA")
	if err != nil {
		return "", err
	}
	c.Text.StartResponse(id)
	_, _, err = c.Text.ReadResponse(354)
	c.Text.EndResponse(id)
	if err != nil {
		return "", err
	}
	w := c.Text.DotWriter()
	if _, err := w.Write(msg); err != nil {
		return "", err
	}
	if err := w.Close(); err != nil {
		return "", err
	}
	code, text, err := c.Text.ReadResponse(250)
	if err != nil {
		return "", err
	}
	return identifier.Visible(fmt.Sprintf("%d %s", code, text)), nil
}

// smtpAnswer is a failed attempt, with the server's reply as its answer
// when the server gave one.
func smtpAnswer(err error) Answer {
	a := Answer{Err: err}
	var reply *textproto.Error
	if errors.As(err, &reply) {
		a.Said = identifier.Visible(fmt.Sprintf("%d %s", reply.Code, reply.Msg))
	}
	return a
}

// envelopeAddress is the bare address of SMTP_FROM, which may carry a name.
func envelopeAddress(from string) (string, error) {
	a, err := parseAddress(from)
	if err != nil {
		return "", fmt.Errorf("SMTP_FROM: %w", err)
	}
	return a.Address, nil
}

// compose writes the message: plain UTF-8 text, quoted-printable so that
// any server takes it, with the heading as its subject.
func (ml mailer) compose(to string, m message) []byte {
	var b bytes.Buffer
	header := func(name, value string) { fmt.Fprintf(&b, "%s: %s\r\n", name, value) }
	header("From", ml.from)
	header("To", to)
	header("Subject", mime.QEncoding.Encode("utf-8", "[edihub] "+m.heading()))
	header("Date", time.Now().Format(time.RFC1123Z))
	header("Message-ID", messageID())
	header("MIME-Version", "1.0")
	header("Content-Type", "text/plain; charset=utf-8")
	header("Content-Transfer-Encoding", "quoted-printable")
	header("Auto-Submitted", "auto-generated")
	b.WriteString("\r\n")
	w := quotedprintable.NewWriter(&b)
	// Writes to a bytes.Buffer do not fail.
	_, _ = w.Write(bytes.ReplaceAll([]byte(m.text()), []byte("\n"), []byte("\r\n")))
	_ = w.Close()
	return b.Bytes()
}

// messageID is a new, unique Message-ID.
func messageID() string {
	var r [16]byte
	rand.Read(r[:])
	return "<" + hex.EncodeToString(r[:]) + "@edihub>"
}
