package notify

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/lefia/edihub/internal/config"
	"github.com/lefia/edihub/internal/egress"
	"github.com/lefia/edihub/internal/identifier"
	"github.com/lefia/edihub/internal/signature"
)

// answerBytes bounds what is kept of a channel's answer: enough for an
// error message ("no_service", "invalid_token"), never a whole page.
const answerBytes = 256

// Channel is where a notification goes: an email address, or a URL, with
// the signing secret of a generic webhook.
type Channel struct {
	ID     int64
	Kind   string
	Target string
	Secret string
}

// Answer is what one attempt found out.
type Answer struct {
	// Said is what the channel answered: "HTTP 200 OK: ok", or the SMTP
	// server's reply ("250 2.0.0 Ok: queued as …"); empty when no answer
	// came (a refused connection, a timeout).
	Said string
	// Err says why the attempt failed; nil when the channel took the
	// notification.
	Err error
}

// Sender sends notifications to channels of every kind.
type Sender struct {
	http      *http.Client
	mail      mailer
	publicURL string
	timeout   time.Duration
}

// NewSender returns a Sender with cfg's mail server and timeout. Slack and
// webhook channels are URLs a tenant's admin chose, so their connections
// obey policy, as destinations' do.
func NewSender(cfg config.Notify, policy egress.Policy) *Sender {
	return &Sender{
		http:      policy.HTTPClient(cfg.Timeout),
		mail:      mailer{server: cfg.SMTP, from: cfg.From, timeout: cfg.Timeout},
		publicURL: cfg.PublicURL,
		timeout:   cfg.Timeout,
	}
}

// send makes one attempt to hand m to ch, within the timeout.
func (s *Sender) send(ctx context.Context, ch Channel, m message) Answer {
	ctx, cancel := context.WithTimeout(ctx, s.timeout)
	defer cancel()
	if strings.HasPrefix(m.Link, "/") {
		m.Link = s.publicURL + m.Link
	}
	switch ch.Kind {
	case KindEmail:
		return s.mail.send(ctx, ch.Target, m)
	case KindSlack:
		body, err := m.slackBody()
		if err != nil {
			return Answer{Err: err}
		}
		return s.post(ctx, ch.Target, body, nil)
	case KindWebhook:
		body, err := m.webhookBody()
		if err != nil {
			return Answer{Err: err}
		}
		id, timestamp := "ntf_"+strconv.FormatInt(m.ID, 10), time.Now().Unix()
		sig, err := signature.SignStandardWebhooks(ch.Secret, id, timestamp, body)
		if err != nil {
			return Answer{Err: fmt.Errorf("sign: %w", err)}
		}
		return s.post(ctx, ch.Target, body, http.Header{
			"Webhook-Id": {id}, "Webhook-Timestamp": {strconv.FormatInt(timestamp, 10)}, "Webhook-Signature": {sig},
		})
	}
	return Answer{Err: fmt.Errorf("channel %d is of an unknown kind %q", ch.ID, ch.Kind)}
}

// post sends a JSON body to url; a 2xx answer takes it. A redirect is an
// answer that is not 2xx, not followed.
func (s *Sender) post(ctx context.Context, url string, body []byte, header http.Header) Answer {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return Answer{Err: fmt.Errorf("build request: %w", err)}
	}
	for k, v := range header {
		req.Header[k] = v
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", "edihub")
	resp, err := s.http.Do(req)
	if err != nil {
		if errors.Is(err, egress.ErrForbidden) {
			return Answer{Err: fmt.Errorf("refused by the egress policy: %w", err)}
		}
		return Answer{Err: err}
	}
	defer resp.Body.Close()
	// The answer is the receiver's to choose: text PostgreSQL cannot keep or
	// that would mislead an admin's screen is kept as escapes.
	start, _ := io.ReadAll(io.LimitReader(resp.Body, answerBytes))
	a := Answer{Said: identifier.Visible("HTTP " + resp.Status)}
	if text := strings.TrimSpace(string(start)); text != "" {
		a.Said += ": " + identifier.Visible(text)
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		a.Err = fmt.Errorf("the channel answered %s", identifier.Visible(resp.Status))
	}
	return a
}
