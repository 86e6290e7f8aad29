package alert_test

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/lefia/edihub/internal/alert"
	"github.com/lefia/edihub/internal/config"
	"github.com/lefia/edihub/internal/delivery"
	"github.com/lefia/edihub/internal/ingest"
	"github.com/lefia/edihub/internal/mailtest"
	"github.com/lefia/edihub/internal/messagetype"
	"github.com/lefia/edihub/internal/notify"
	"github.com/lefia/edihub/internal/pgtest"
	"github.com/lefia/edihub/internal/provision"
	"github.com/lefia/edihub/internal/testfactory"
)

// hook is a webhook channel's receiver: it keeps the event of every
// notification posted to it.
type hook struct {
	mu     sync.Mutex
	events []string
}

func (h *hook) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	var body struct{ Rule, Event string }
	raw, _ := io.ReadAll(r.Body)
	if json.Unmarshal(raw, &body) == nil {
		h.mu.Lock()
		h.events = append(h.events, body.Rule+" "+body.Event)
		h.mu.Unlock()
	}
	w.WriteHeader(http.StatusNoContent)
}

func (h *hook) received() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]string(nil), h.events...)
}

// The test of done: a destination that fails every attempt gives
// exactly one notification per channel, by a real SMTP server and a
// webhook receiver, within ALERT_EVAL_INTERVAL + ALERT_DESTINATION_FAILING_FOR
// of its first failed attempt, and one "resolved" each once its deliveries
// succeed again. Everything runs as in serve: the delivery and
// notification workers on one River client, the evaluator's rounds.
func TestAFailingDestinationNotifiesOncePerChannelAndResolves(t *testing.T) {
	t.Parallel()
	pool := pgtest.Pool(t)
	mail := mailtest.StartPlain(t)
	webhook := &hook{}
	hookServer := httptest.NewServer(webhook)
	t.Cleanup(hookServer.Close)
	var up atomic.Bool
	destination := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		if !up.Load() {
			w.WriteHeader(http.StatusServiceUnavailable)
			return
		}
		w.WriteHeader(http.StatusOK)
	}))
	t.Cleanup(destination.Close)

	cfg, err := config.Load(func(name string) string {
		return map[string]string{
			"SMTP_URL": "smtp://" + mail.Addr, "SMTP_FROM": "edihub <alerts@example.com>",
			"DESTINATION_ALLOWED_CIDRS": "127.0.0.0/8", "DELIVERY_MAX_ATTEMPTS": "100", "DELIVERY_RETRY_BASE": "200ms",
			"NOTIFY_RETRY_BASE": "100ms", "ALERT_EVAL_INTERVAL": "1s", "ALERT_DESTINATION_FAILING_FOR": "3s",
		}[name]
	})
	require.NoError(t, err)

	tenant, env := testfactory.TenantWithEnvironment(t, pool, "acme")
	mt := testfactory.MessageType(t, pool, &testfactory.MessageTypeOpts{Fields: []string{"id"}})
	testfactory.Destination(t, pool, testfactory.DestinationOpts{URL: destination.URL})
	ctx := context.Background()
	for _, ch := range []provision.ChannelSpec{
		{TenantSlug: "acme", Kind: notify.KindEmail, Target: "ops@acme.example"},
		{Kind: notify.KindWebhook, Target: hookServer.URL + "/alerts"},
	} {
		_, _, err := provision.New(pool).CreateChannel(ctx, ch, cfg.Delivery.Egress)
		require.NoError(t, err)
	}

	runCtx, stop := context.WithCancel(ctx)
	runner, err := delivery.NewRunner(pool, cfg.Delivery, time.Second, slog.New(slog.DiscardHandler), nil,
		notify.Queue(pool, cfg.Notify, cfg.Delivery.Egress))
	require.NoError(t, err)
	done := make(chan error, 1)
	go func() { done <- runner.Run(runCtx) }()
	evaluator := alert.New(pool, slog.New(slog.DiscardHandler), cfg.Alerts, delivery.NewService(pool, cfg.Delivery.MaxAttempts))
	evaluated := make(chan struct{})
	go func() {
		evaluator.Run(runCtx, cfg.Alerts.EvalInterval)
		close(evaluated)
	}()
	t.Cleanup(func() {
		stop()
		<-evaluated
		require.NoError(t, <-done)
	})

	deliveries := delivery.NewService(pool, cfg.Delivery.MaxAttempts)
	_, err = ingest.New(pool, time.Hour, deliveries).Receive(ctx, ingest.Request{
		TenantID: tenant.ID, EnvironmentID: env.ID, MessageType: messagetype.Prepare(mt), Docnum: "D-1",
		Payload: []byte(`{"id": "1"}`), Source: ingest.Source{Endpoint: ingest.EndpointReceiveMessage, Actor: "test"},
	})
	require.NoError(t, err)

	mailsOf := func(event string) int {
		n := 0
		for _, m := range mail.Received() {
			if strings.Contains(m.Data, "destination.failing") && strings.Contains(m.Data, event) {
				n++
			}
		}
		return n
	}
	opened := func() bool { return mailsOf("opened") == 1 && len(webhook.received()) == 1 }
	require.Eventually(t, opened, 30*time.Second, 50*time.Millisecond, "mails %v, webhook %v", mail.Received(), webhook.received())

	// Opened within ALERT_EVAL_INTERVAL + ALERT_DESTINATION_FAILING_FOR of
	// the first failed attempt (and the time a round takes).
	var late time.Duration
	require.NoError(t, pool.QueryRow(ctx, `
		SELECT extract(epoch FROM (SELECT min(created_at) FROM notifications)
		       - (SELECT min(started_at) FROM delivery_attempts)) * interval '1 second'`).Scan(&late))
	require.LessOrEqual(t, late, cfg.Alerts.EvalInterval+cfg.Alerts.DestinationFailingFor+time.Second)
	require.GreaterOrEqual(t, late, cfg.Alerts.DestinationFailingFor)

	// Rounds go on while it keeps failing: nobody is told twice.
	time.Sleep(3 * cfg.Alerts.EvalInterval)
	require.Equal(t, 1, mailsOf("opened"))
	require.Equal(t, []string{"destination.failing opened"}, webhook.received())

	up.Store(true)
	require.Eventually(t, func() bool { return mailsOf("resolved") == 1 && len(webhook.received()) == 2 },
		30*time.Second, 50*time.Millisecond, "mails %v, webhook %v", mail.Received(), webhook.received())
	time.Sleep(2 * cfg.Alerts.EvalInterval)
	require.Equal(t, 1, mailsOf("opened"))
	require.Equal(t, 1, mailsOf("resolved"))
	require.Equal(t, []string{"destination.failing opened", "destination.failing resolved"}, webhook.received())
	require.Equal(t, 4, pgtest.Count(t, pool, `SELECT count(*) FROM notifications WHERE status = 'sent'`))
}
