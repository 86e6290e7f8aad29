package notify_test

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"
	"github.com/stretchr/testify/require"

	"github.com/lefia/edihub/internal/auth"
	"github.com/lefia/edihub/internal/config"
	"github.com/lefia/edihub/internal/db"
	"github.com/lefia/edihub/internal/delivery"
	"github.com/lefia/edihub/internal/egress"
	"github.com/lefia/edihub/internal/mailtest"
	"github.com/lefia/edihub/internal/notify"
	"github.com/lefia/edihub/internal/pgtest"
	"github.com/lefia/edihub/internal/signature"
	"github.com/lefia/edihub/internal/testfactory"
)

// testBundle is a database with tenants acme and globex, a mail server,
// and the settings the workers and tests send with.
type testBundle struct {
	pool         *pgxpool.Pool
	acme, globex int64
	mail         *mailtest.Server
	cfg          config.Notify
	policy       egress.Policy
}

func setup(t *testing.T) *testBundle {
	t.Helper()
	pool := pgtest.Pool(t)
	b := &testBundle{pool: pool, mail: mailtest.Start(t)}
	b.acme = testfactory.Tenant(t, pool, &testfactory.TenantOpts{Slug: "acme"}).ID
	b.globex = testfactory.Tenant(t, pool, &testfactory.TenantOpts{Slug: "globex"}).ID
	host, port, err := net.SplitHostPort(b.mail.Addr)
	require.NoError(t, err)
	b.cfg = config.Notify{
		SMTP: config.SMTP{Host: host, Port: port, Username: "user", Password: "secret"},
		From: "edihub <edihub@example.com>", PublicURL: "https://edihub.example.com",
		Timeout: 5 * time.Second, MaxAttempts: 3, RetryBase: 10 * time.Millisecond,
	}
	b.policy, err = egress.ParsePolicy("127.0.0.0/8")
	require.NoError(t, err)
	return b
}

func (b *testBundle) sender() *notify.Sender {
	return notify.NewSender(b.cfg, b.policy).TrustingMailServer(b.mail.Roots)
}

// startWorkers runs the notification queue's workers until the test ends.
func (b *testBundle) startWorkers(t *testing.T) {
	t.Helper()
	workers := river.NewWorkers()
	river.AddWorker(workers, notify.NewWorker(b.pool, b.cfg, b.sender()))
	client, err := river.NewClient(riverpgxv5.New(b.pool), &river.Config{
		Queues:            map[string]river.QueueConfig{notify.QueueName: {MaxWorkers: notify.Workers}},
		Workers:           workers,
		FetchCooldown:     5 * time.Millisecond,
		FetchPollInterval: 20 * time.Millisecond,
	})
	require.NoError(t, err)
	require.NoError(t, client.Start(context.Background()))
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		require.NoError(t, client.Stop(ctx))
	})
}

// channel stores a channel of tenant (nil: global) and returns its id and,
// for a webhook, its secret.
func (b *testBundle) channel(t *testing.T, tenant *int64, kind, target string) (int64, string) {
	t.Helper()
	var secret *string
	if kind == notify.KindWebhook {
		s, err := signature.GenerateSecret(signature.StandardWebhooks)
		require.NoError(t, err)
		secret = &s
	}
	id, err := db.On(b.pool).NotificationChannelInsert(context.Background(), db.NotificationChannelInsertParams{
		TenantID: tenant, Kind: kind, Name: kind + " channel", Target: target, Secret: secret,
	})
	require.NoError(t, err)
	if secret == nil {
		return id, ""
	}
	return id, *secret
}

// enqueue writes n's notifications in a transaction of their own.
func (b *testBundle) enqueue(t *testing.T, n notify.Notification) int {
	t.Helper()
	var written int
	require.NoError(t, db.WithPgxTx(context.Background(), b.pool, func(tx pgx.Tx) error {
		var err error
		written, err = notify.Enqueue(context.Background(), tx, n)
		return err
	}))
	return written
}

type row struct {
	Status, LastError, LastAnswer string
	Attempts                      int
	Sent                          bool
}

// settled waits until every notification of channel is sent or failed.
func (b *testBundle) settled(t *testing.T, channel int64) []row {
	t.Helper()
	var rows []row
	require.Eventually(t, func() bool {
		r, err := b.pool.Query(context.Background(),
			`SELECT status, last_error, last_answer, attempts, sent_at IS NOT NULL FROM notifications WHERE channel_id = $1 ORDER BY id`, channel)
		require.NoError(t, err)
		rows, err = pgx.CollectRows(r, func(r pgx.CollectableRow) (row, error) {
			var x row
			return x, r.Scan(&x.Status, &x.LastError, &x.LastAnswer, &x.Attempts, &x.Sent)
		})
		require.NoError(t, err)
		for _, x := range rows {
			if x.Status == notify.StatusPending {
				return false
			}
		}
		return len(rows) > 0
	}, 20*time.Second, 20*time.Millisecond)
	return rows
}

var opened = notify.Notification{
	AlertID: 42, Event: notify.EventOpened, Rule: "destination.failing",
	Title: "Destination 3 of acme/production is failing",
	Lines: []string{"Every attempt has failed since 07:40 UTC.", "12 deliveries are waiting."},
	Link:  "/admin/alerts/42",
}

func TestEnqueueWritesTheTenantsChannelsAndTheGlobalOnes(t *testing.T) {
	t.Parallel()
	b := setup(t)
	acmeMail, _ := b.channel(t, &b.acme, notify.KindEmail, "ops@acme.example")
	globexMail, _ := b.channel(t, &b.globex, notify.KindEmail, "ops@globex.example")
	global, _ := b.channel(t, nil, notify.KindSlack, "https://hooks.example.com/x")
	count := func(channel int64) int {
		return pgtest.Count(t, b.pool, `SELECT count(*) FROM notifications WHERE channel_id = $1`, channel)
	}

	n := opened
	n.TenantID = &b.acme
	require.Equal(t, 2, b.enqueue(t, n))
	require.Equal(t, 1, count(acmeMail))
	require.Equal(t, 0, count(globexMail), "another tenant's channel hears nothing of acme")
	require.Equal(t, 1, count(global))

	n.TenantID = nil
	require.Equal(t, 1, b.enqueue(t, n), "a global alert goes to the global channels only")
	require.Equal(t, 1, count(acmeMail))
	require.Equal(t, 2, count(global))
	require.Equal(t, 3, pgtest.Count(t, b.pool, `SELECT count(*) FROM river_job WHERE queue = $1 AND kind = 'notification'`, notify.QueueName),
		"one job a notification")

	// A transaction that rolls back leaves neither notifications nor jobs.
	err := db.WithPgxTx(context.Background(), b.pool, func(tx pgx.Tx) error {
		n.TenantID = &b.globex
		written, err := notify.Enqueue(context.Background(), tx, n)
		require.NoError(t, err)
		require.Equal(t, 2, written)
		return context.Canceled
	})
	require.ErrorIs(t, err, context.Canceled)
	require.Equal(t, 0, count(globexMail))
	require.Equal(t, 3, pgtest.Count(t, b.pool, `SELECT count(*) FROM river_job WHERE queue = $1`, notify.QueueName))
}

func TestEveryKindIsSent(t *testing.T) {
	t.Parallel()
	b := setup(t)
	var (
		mu          sync.Mutex
		slackBody   map[string]string
		hookBody    []byte
		hookHeaders http.Header
	)
	slack := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		defer mu.Unlock()
		require.NoError(t, json.NewDecoder(r.Body).Decode(&slackBody))
		_, _ = io.WriteString(w, "ok")
	}))
	defer slack.Close()
	hook := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		defer mu.Unlock()
		hookBody, _ = io.ReadAll(r.Body)
		hookHeaders = r.Header.Clone()
		w.WriteHeader(http.StatusNoContent)
	}))
	defer hook.Close()
	mailID, _ := b.channel(t, &b.acme, notify.KindEmail, "ops@acme.example")
	slackID, _ := b.channel(t, &b.acme, notify.KindSlack, slack.URL+"/services/T/B/X")
	hookID, secret := b.channel(t, nil, notify.KindWebhook, hook.URL+"/alerts")
	b.startWorkers(t)

	n := opened
	n.TenantID = &b.acme
	n.Title = "Destination <!channel> & co"
	require.Equal(t, 3, b.enqueue(t, n))

	for _, id := range []int64{mailID, slackID, hookID} {
		rows := b.settled(t, id)
		require.Equal(t, []row{{Status: notify.StatusSent, Attempts: 1, Sent: true, LastAnswer: rows[0].LastAnswer}}, rows)
	}
	require.Equal(t, "HTTP 200 OK: ok", b.settled(t, slackID)[0].LastAnswer)
	require.Equal(t, "HTTP 204 No Content", b.settled(t, hookID)[0].LastAnswer)
	require.Contains(t, b.settled(t, mailID)[0].LastAnswer, "250 ", "the mail server's reply to the message")

	mails := b.mail.Received()
	require.Len(t, mails, 1)
	m := mails[0]
	require.Equal(t, "edihub@example.com", m.From)
	require.Equal(t, "ops@acme.example", m.To)
	require.True(t, m.TLS, "STARTTLS, which the server offers")
	require.True(t, b.mail.Authenticated(), "signed in with SMTP_URL's user")
	require.Contains(t, m.Data, "Subject: [edihub] [opened] destination.failing: Destination <!channel> & co\r\n")
	require.Contains(t, m.Data, "12 deliveries are waiting.")
	require.Contains(t, m.Data, "https://edihub.example.com/admin/alerts/42", "the link made absolute with PUBLIC_URL")

	mu.Lock()
	defer mu.Unlock()
	require.Equal(t, "*[opened] destination.failing: Destination &lt;!channel&gt; &amp; co*\n"+
		"Every attempt has failed since 07:40 UTC.\n12 deliveries are waiting.\n"+
		"<https://edihub.example.com/admin/alerts/42|Open in edihub>", slackBody["text"],
		"Slack's special characters escaped, so a title cannot mention anyone")

	signedID, err := signature.Verify(signature.StandardWebhooks, []string{secret}, hookHeaders, hookBody, time.Now())
	require.NoError(t, err, "signed the Standard Webhooks way with the channel's secret")
	require.True(t, strings.HasPrefix(signedID, "ntf_"))
	var payload map[string]any
	require.NoError(t, json.Unmarshal(hookBody, &payload))
	require.Equal(t, "alert.opened", payload["type"])
	require.Equal(t, float64(42), payload["alert_id"])
	require.Equal(t, "destination.failing", payload["rule"])
	require.Equal(t, []any{"Every attempt has failed since 07:40 UTC.", "12 deliveries are waiting."}, payload["lines"])
	require.Equal(t, "https://edihub.example.com/admin/alerts/42", payload["link"])
}

func TestAFailingReceiverIsRetriedUntilItTakesTheNotification(t *testing.T) {
	t.Parallel()
	b := setup(t)
	var calls atomic.Int32
	var ids sync.Map
	hook := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ids.Store(r.Header.Get("webhook-id"), true)
		if calls.Add(1) < 3 {
			http.Error(w, "busy", http.StatusServiceUnavailable)
			return
		}
		w.WriteHeader(http.StatusOK)
	}))
	defer hook.Close()
	id, _ := b.channel(t, nil, notify.KindWebhook, hook.URL)
	b.startWorkers(t)

	b.enqueue(t, opened)
	require.Equal(t, []row{{Status: notify.StatusSent, Attempts: 3, Sent: true, LastAnswer: "HTTP 200 OK"}}, b.settled(t, id),
		"the last attempt's answer; the earlier errors are gone with it")
	require.Equal(t, int32(3), calls.Load())
	n := 0
	ids.Range(func(any, any) bool { n++; return true })
	require.Equal(t, 1, n, "every attempt carries the same webhook-id")
}

func TestASlackURLAnswering404IsRetriedThenFailed(t *testing.T) {
	t.Parallel()
	b := setup(t)
	slack := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		http.Error(w, "no_service", http.StatusNotFound)
	}))
	defer slack.Close()
	id, _ := b.channel(t, &b.acme, notify.KindSlack, slack.URL+"/services/gone")

	// The admin's test says at once what the channel answered.
	a, err := notify.NewService(b.pool, b.sender()).Test(context.Background(), auth.TenantScope(b.acme), id, "user:1")
	require.NoError(t, err)
	require.EqualError(t, a.Err, "the channel answered 404 Not Found")
	require.Equal(t, "HTTP 404 Not Found: no_service", a.Said)

	b.startWorkers(t)
	n := opened
	n.TenantID = &b.acme
	b.enqueue(t, n)
	rows := b.settled(t, id)
	require.Equal(t, []row{
		{Status: notify.StatusFailed, Attempts: 1, LastError: "the channel answered 404 Not Found", LastAnswer: "HTTP 404 Not Found: no_service"},
		{Status: notify.StatusFailed, Attempts: 3, LastError: "the channel answered 404 Not Found", LastAnswer: "HTTP 404 Not Found: no_service"},
	}, rows, "the test, then the alert's notification after NOTIFY_MAX_ATTEMPTS; both kept")
}

func TestAnUnreachableMailServerFailsTheNotification(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	_, port, _ := net.SplitHostPort(ln.Addr().String())
	require.NoError(t, ln.Close())
	b.cfg.SMTP.Port = port
	id, _ := b.channel(t, nil, notify.KindEmail, "ops@example.com")

	a, err := notify.NewService(b.pool, b.sender()).Test(context.Background(), auth.GlobalScope(), id, "user:1")
	require.NoError(t, err)
	require.ErrorContains(t, a.Err, "connect to the mail server")
	require.ErrorContains(t, a.Err, "connection refused")
	require.Empty(t, a.Said, "no server answered")

	b.startWorkers(t)
	b.enqueue(t, opened)
	rows := b.settled(t, id)
	require.Len(t, rows, 2)
	require.Equal(t, notify.StatusFailed, rows[1].Status)
	require.Equal(t, 3, rows[1].Attempts)
	require.Contains(t, rows[1].LastError, "connection refused")
}

func TestTheMailServersRefusalIsTheAnswer(t *testing.T) {
	t.Parallel()
	b := setup(t)
	id, _ := b.channel(t, &b.acme, notify.KindEmail, "ops@refused.example")
	a, err := notify.NewService(b.pool, b.sender()).Test(context.Background(), auth.TenantScope(b.acme), id, "user:1")
	require.NoError(t, err)
	require.ErrorContains(t, a.Err, "RCPT TO")
	require.Equal(t, "550 5.1.1 no such mailbox", a.Said)
}

func TestWithoutAMailServerEmailFailsSaying(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.cfg.SMTP = config.SMTP{}
	id, _ := b.channel(t, nil, notify.KindEmail, "ops@example.com")
	a, err := notify.NewService(b.pool, b.sender()).Test(context.Background(), auth.GlobalScope(), id, "user:1")
	require.NoError(t, err)
	require.ErrorContains(t, a.Err, "set SMTP_URL and SMTP_FROM")
}

func TestAWebhookToARefusedAddressIsNotConnectedTo(t *testing.T) {
	t.Parallel()
	b := setup(t)
	var called atomic.Bool
	hook := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { called.Store(true) }))
	defer hook.Close()
	// The channel was allowed when created; the policy now refuses loopback.
	id, _ := b.channel(t, nil, notify.KindWebhook, hook.URL)
	b.policy = egress.Policy{}
	a, err := notify.NewService(b.pool, b.sender()).Test(context.Background(), auth.GlobalScope(), id, "user:1")
	require.NoError(t, err)
	require.ErrorIs(t, a.Err, egress.ErrForbidden)
	require.ErrorContains(t, a.Err, "loopback")
	require.False(t, called.Load())
}

func TestATenantTestsAndListsItsOwnChannelsOnly(t *testing.T) {
	t.Parallel()
	b := setup(t)
	global, _ := b.channel(t, nil, notify.KindEmail, "ops@example.com")
	globex, _ := b.channel(t, &b.globex, notify.KindEmail, "ops@globex.example")
	s := notify.NewService(b.pool, b.sender())
	for _, id := range []int64{global, globex} {
		_, err := s.Test(context.Background(), auth.TenantScope(b.acme), id, "user:1")
		require.ErrorContains(t, err, "does not exist")
	}
	_, err := s.Test(context.Background(), auth.GlobalScope(), globex, "user:1")
	require.NoError(t, err)
	sent, err := s.Recent(context.Background(), auth.TenantScope(b.acme), globex)
	require.NoError(t, err)
	require.Empty(t, sent, "another tenant's notifications are not listed")
	sent, err = s.Recent(context.Background(), auth.TenantScope(b.globex), globex)
	require.NoError(t, err)
	require.Len(t, sent, 1)
	require.Equal(t, notify.EventTest, sent[0].Event)
	require.Equal(t, notify.StatusSent, sent[0].Status)
	require.Len(t, b.mail.Received(), 1, "one mail, the test")
}

func TestTheDeliveryWorkersSendNotifications(t *testing.T) {
	t.Parallel()
	b := setup(t)
	var calls atomic.Int32
	hook := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { calls.Add(1) }))
	defer hook.Close()
	id, _ := b.channel(t, &b.acme, notify.KindWebhook, hook.URL)
	cfg := config.Delivery{Egress: b.policy, Timeout: 5 * time.Second, MaxAttempts: 2, RetryBase: time.Second, SyncInterval: time.Second}
	runner, err := delivery.NewRunner(b.pool, cfg, time.Second, slog.New(slog.DiscardHandler), nil, notify.Queue(b.pool, b.cfg, b.policy))
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- runner.Run(ctx) }()
	defer func() {
		cancel()
		require.NoError(t, <-done)
	}()

	n := opened
	n.TenantID = &b.acme
	b.enqueue(t, n)
	require.Equal(t, []row{{Status: notify.StatusSent, Attempts: 1, Sent: true, LastAnswer: "HTTP 200 OK"}}, b.settled(t, id),
		"serve and worker run the queue notifications on their River client")
	require.Equal(t, int32(1), calls.Load())
}

func TestEmailOverImplicitTLSWithATitleOfManyLines(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.mail = mailtest.StartImplicitTLS(t)
	_, port, err := net.SplitHostPort(b.mail.Addr)
	require.NoError(t, err)
	b.cfg.SMTP.Port, b.cfg.SMTP.ImplicitTLS = port, true
	id, _ := b.channel(t, nil, notify.KindEmail, "ops@example.com")
	b.startWorkers(t)

	n := opened
	n.Title = "Destination down\r\nBcc: everyone@example.com"
	n.Lines = []string{"line one\nline two", "Ünïcödé ✓"}
	b.enqueue(t, n)
	require.Equal(t, notify.StatusSent, b.settled(t, id)[0].Status)
	mails := b.mail.Received()
	require.Len(t, mails, 1)
	require.True(t, mails[0].TLS, "smtps:// speaks TLS from the start")
	require.Contains(t, mails[0].Data, "Subject: [edihub] [opened] destination.failing: Destination down  Bcc: everyone@example.com\r\n",
		"a title stays one line: it cannot add a header")
	require.NotContains(t, mails[0].Data, "\r\nBcc:")
	require.Contains(t, mails[0].Data, "line one line two")
	require.Contains(t, mails[0].Data, "=C3=9Cn=C3=AFc=C3=B6d=C3=A9 =E2=9C=93", "UTF-8, quoted-printable")
}
