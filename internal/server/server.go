// Package server is edihub's HTTP layer: Echo wiring, request parsing and
// authorisation, and the one place where errors become HTTP answers. The
// business decisions live in the domain packages it calls.
package server

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"time"

	"github.com/alexedwards/scs/v2"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/labstack/echo/v4"

	"github.com/lefia/edihub/internal/alert"
	"github.com/lefia/edihub/internal/auditlog"
	"github.com/lefia/edihub/internal/auth"
	"github.com/lefia/edihub/internal/blocked"
	"github.com/lefia/edihub/internal/config"
	"github.com/lefia/edihub/internal/delivery"
	"github.com/lefia/edihub/internal/ingest"
	"github.com/lefia/edihub/internal/messageview"
	"github.com/lefia/edihub/internal/metrics"
	"github.com/lefia/edihub/internal/notify"
	"github.com/lefia/edihub/internal/partner"
	"github.com/lefia/edihub/internal/provision"
	"github.com/lefia/edihub/internal/refused"
	"github.com/lefia/edihub/internal/replication"
	"github.com/lefia/edihub/internal/retention"
	"github.com/lefia/edihub/internal/sender"
	"github.com/lefia/edihub/internal/standby"
	"github.com/lefia/edihub/internal/throttle"
	"github.com/lefia/edihub/internal/typeeditor"
)

// Server serves edihub's HTTP endpoints.
type Server struct {
	cfg     config.Config
	pool    *pgxpool.Pool
	log     *slog.Logger
	ingest  *ingest.Service
	senders *sender.Service
	echo    *echo.Echo
	metrics *metrics.Metrics
	// bodies bounds the request bodies the API holds in memory at once.
	bodies *bodyBudget
	// keyFailures throttles clients whose API keys keep failing.
	keyFailures *throttle.Failures
	// heavy bounds the admin pages that work on whole payloads.
	heavy *heavyWork
	// replication knows whether the primary has a synchronous standby, for
	// REQUIRE_SYNCHRONOUS_STANDBY: intake is refused while it goes on
	// alone, and every commit is confirmed unless it is a single server.
	replication replication.Guard
	// refusals counts refused ingest requests per API key and integration
	// (intake.refusing).
	refusals *refused.Counter

	// The admin pages: signed-in sessions, users, the audit log, messages,
	// message types, the dashboard and blocked copies.
	sessions  *scs.SessionManager
	auth      *auth.Service
	audit     *auditlog.Service
	messages  *messageview.Service
	provision *provision.Service
	types     *typeeditor.Service
	blocked   *blocked.Service
	// deliveries lists and retries deliveries and pauses destinations.
	deliveries *delivery.Service
	// notify tests notification channels and lists what they were sent.
	notify *notify.Service
	// retention tells how long data is kept and what the sweeps removed.
	retention *retention.Reader
	// alerts lists and acknowledges alerts.
	alerts *alert.Service
	// adminReadPool is ADMIN_DATABASE_URL's pool (WithAdminReads), and
	// reads chooses between it and the primary for the read-only pages.
	adminReadPool *pgxpool.Pool
	reads         *standby.Reads
	// partners lists the senders and receivers of interchanges.
	partners *partner.Service

	// flushRefusals says that Serve flushes refusals itself.
	flushRefusals bool

	// now is the clock that webhook signature timestamps are checked
	// against; tests replace it to verify signatures made in the past.
	now func() time.Time
}

// Option changes a default of New.
type Option func(*Server)

// WithMetrics makes the server count into m, which the caller serves;
// without it the server keeps metrics of its own.
func WithMetrics(m *metrics.Metrics) Option {
	return func(s *Server) { s.metrics = m }
}

// WithRefusals makes the server count refused ingest requests into c,
// which the caller flushes; without it the server flushes a counter of its
// own while it serves.
func WithRefusals(c *refused.Counter) Option {
	return func(s *Server) { s.refusals, s.flushRefusals = c, false }
}

// WithClock makes the server read the time from now instead of time.Now,
// so that tests can verify signed requests with fixed timestamps.
func WithClock(now func() time.Time) Option {
	return func(s *Server) { s.now = now }
}

// New builds a server with every route registered.
func New(cfg config.Config, pool *pgxpool.Pool, log *slog.Logger, opts ...Option) *Server {
	deliveries := delivery.NewService(pool, cfg.Delivery.MaxAttempts)
	senders := sender.New(pool, cfg.APIKeyCacheTTL)
	s := &Server{
		cfg:     cfg,
		pool:    pool,
		log:     log,
		senders: senders,
		echo:    echo.New(),
		now:     time.Now,

		keyFailures:   newKeyFailures(),
		refusals:      refused.New(),
		flushRefusals: true,

		sessions:  newSessions(pool, cfg.CookieSecure),
		auth:      auth.New(pool),
		audit:     auditlog.New(pool),
		messages:  messageview.New(pool),
		provision: provision.New(pool).AnnouncingChanges(senders.ForgetTenant),
		types:     typeeditor.New(pool).AnnouncingChanges(senders.ForgetTenant),
		blocked:   blocked.New(pool, deliveries),

		deliveries: deliveries,
		notify:     notify.NewService(pool, notify.NewSender(cfg.Notify, cfg.Delivery.Egress)),
		retention:  retention.NewReader(pool, retention.Policy{Periods: cfg.Retention, KeyTTL: cfg.IdempotencyKeyTTL, InterchangeWindow: cfg.InterchangeWindow}),
		alerts:     alert.NewService(pool),
		partners:   partner.NewService(pool, cfg.Alerts.InterchangeGapAfter),
	}
	for _, opt := range opts {
		opt(s)
	}
	if s.metrics == nil {
		s.metrics = metrics.New(pool)
	}
	if s.adminReadPool == nil {
		s.adminReadPool = pool
	}
	s.reads = standby.New(pool, s.adminReadPool, log)
	s.ingest = ingest.New(pool, cfg.IdempotencyKeyTTL, deliveries, append(groupCommitOptions(cfg, s.metrics),
		ingest.WithConfirmedCommits(func() bool { return cfg.RequireSynchronousStandby && s.replication.Confirming() }))...)
	s.bodies = newBodyBudget(cfg.MaxBodyBytesInProcess, s.metrics)
	s.heavy = newHeavyWork()
	s.echo.HideBanner = true
	s.echo.HidePort = true
	s.echo.HTTPErrorHandler = s.handleError
	s.echo.IPExtractor = clientAddress(cfg.TrustedProxies)
	s.routes()
	return s
}

// groupCommitOptions are the ingest options GROUP_COMMIT asks for, with
// each group's size counted in m.
func groupCommitOptions(cfg config.Config, m *metrics.Metrics) []ingest.Option {
	switch {
	case cfg.GroupCommitOff:
		return []ingest.Option{ingest.WithGroupLanes(0)}
	case cfg.GroupCommitLanes > 0:
		return []ingest.Option{ingest.WithGroupLanes(cfg.GroupCommitLanes), ingest.WithGroupObserver(m.ObserveGroup)}
	}
	return []ingest.Option{ingest.WithGroupObserver(m.ObserveGroup)}
}

// clientAddress tells who sent a request: the peer's own address, unless
// the peer is a trusted proxy, whose X-Forwarded-For then names the client.
// Anyone else could write any address into that header and so dodge the
// login throttle or forge the source of an audit event.
func clientAddress(trusted []*net.IPNet) echo.IPExtractor {
	opts := []echo.TrustOption{echo.TrustLoopback(false), echo.TrustLinkLocal(false), echo.TrustPrivateNet(false)}
	for _, n := range trusted {
		opts = append(opts, echo.TrustIPRange(n))
	}
	return echo.ExtractIPFromXFFHeader(opts...)
}

// Handler is the server's http.Handler, for tests that use httptest.
func (s *Server) Handler() http.Handler { return s.echo }

// Serve answers requests on ln until ctx is cancelled, then stops accepting
// new connections and waits up to ShutdownTimeout for in-flight requests.
// Request contexts do not derive from ctx, so a SIGTERM never aborts a
// request half-way through its transaction.
func (s *Server) Serve(ctx context.Context, ln net.Listener) error {
	srv := &http.Server{
		Handler:           s.echo,
		ReadHeaderTimeout: 10 * time.Second,
		// Bodies of up to MAX_BODY_BYTES must arrive in this time; slow
		// clients cannot hold a connection open for ever. An API body is
		// read with a deadline per read instead (REQUEST_BODY_IDLE_TIMEOUT,
		// see idleBody), which never passes the request's own.
		ReadTimeout: s.cfg.RequestTimeout,
		// The answer of the slowest request still gets out: handlers are
		// bounded by their time limits, and the error page or problem
		// that reports one needs a moment more.
		WriteTimeout:   max(s.cfg.RequestTimeout, s.cfg.AdminRequestTimeout) + 10*time.Second,
		IdleTimeout:    2 * time.Minute,
		MaxHeaderBytes: 64 << 10,
		ErrorLog:       slog.NewLogLogger(s.log.Handler(), slog.LevelWarn),
	}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	go s.expireSessions(ctx)
	go s.senders.Listen(ctx, s.log)
	if s.metrics != nil {
		s.replication.OnRead = s.metrics.ObserveReplication
	}
	go s.replication.Run(ctx, s.pool, replicationCheckInterval, s.log)
	if s.flushRefusals {
		go s.refusals.Run(ctx, s.pool, s.log)
	}

	select {
	case err := <-served:
		return fmt.Errorf("serve: %w", err)
	case <-ctx.Done():
	}
	s.log.Info("shutting down: finishing in-flight requests", "timeout", s.cfg.ShutdownTimeout)
	shutdownCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), s.cfg.ShutdownTimeout)
	defer cancel()
	if err := srv.Shutdown(shutdownCtx); err != nil {
		return fmt.Errorf("graceful shutdown: %w", err)
	}
	if err := <-served; !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("serve: %w", err)
	}
	s.log.Info("shut down")
	return nil
}
