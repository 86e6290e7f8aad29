package cli

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/http/pprof"
	"runtime/debug"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"golang.org/x/sync/errgroup"

	"github.com/lefia/edihub/internal/alert"
	"github.com/lefia/edihub/internal/auditpartition"
	"github.com/lefia/edihub/internal/config"
	"github.com/lefia/edihub/internal/db"
	"github.com/lefia/edihub/internal/delivery"
	"github.com/lefia/edihub/internal/messagetype"
	"github.com/lefia/edihub/internal/metrics"
	"github.com/lefia/edihub/internal/notify"
	"github.com/lefia/edihub/internal/retention"
	"github.com/lefia/edihub/internal/rollup"
	"github.com/lefia/edihub/internal/server"
)

// serve migrates, then serves and runs delivery workers, the housekeeping
// (retention, rollup) and the alert rules until ctx is cancelled (SIGTERM),
// then lets in-flight requests and attempts finish.
func serve(ctx context.Context, env Env, cfg config.Config, log *slog.Logger, args []string) error {
	if err := noArguments("serve", args); err != nil {
		return err
	}
	tuneGC(env.Getenv, cfg)
	pool, err := connect(ctx, cfg, func(c *pgxpool.Config) { db.SizeIngestPool(c, cfg.DatabaseURL) })
	if err != nil {
		return err
	}
	defer pool.Close()
	if err := applyMigrations(ctx, pool, log); err != nil {
		return err
	}
	if err := warnRefusedKeyPaths(ctx, pool, log); err != nil {
		return err
	}

	ln, err := net.Listen("tcp", cfg.ListenAddr)
	if err != nil {
		return err
	}
	log.Info("listening", "addr", ln.Addr().String())
	if env.Listening != nil {
		env.Listening(ln.Addr())
	}
	m := metrics.New(pool)
	if cfg.MetricsAddr != "" {
		if err := serveMetrics(ctx, cfg, m, log); err != nil {
			return err
		}
	}
	// The sweeper stops with the server: its context ends on SIGTERM, and a
	// batch cut short is rolled back whole.
	sweeper := retention.NewSweeper(pool, log, cfg.SweepBatchSize, cfg.SweepInterval,
		retention.Policy{Periods: cfg.Retention, KeyTTL: cfg.IdempotencyKeyTTL, InterchangeWindow: cfg.InterchangeWindow})
	sweeper.OnSweep = func(kind retention.Kind, removed int64, err error) { m.ObserveSweep(string(kind), removed, err) }
	sweeper.OnAuditPartitions = func(r auditpartition.Result, err error) {
		m.ObserveAuditPartitions(len(r.Created), len(r.Dropped), err)
	}
	go sweeper.Run(ctx)
	// The rollup keeps the dashboard's hourly totals; rows stamped within the
	// longest request's time of now may still be to commit.
	roller := rollup.New(pool, log, max(cfg.RequestTimeout, cfg.AdminRequestTimeout))
	roller.OnRound = m.ObserveRollup
	go roller.Run(ctx)
	// The alert rules are evaluated by one replica at a time; each tries
	// every ALERT_EVAL_INTERVAL, and the one holding the round does it.
	evaluator := alert.New(pool, log, cfg.Alerts, delivery.NewService(pool, cfg.Delivery.MaxAttempts))
	evaluator.OnRule = m.ObserveAlertRule
	go evaluator.Run(ctx, cfg.Alerts.EvalInterval)
	runner, err := delivery.NewRunner(pool, cfg.Delivery, cfg.ShutdownTimeout, log, m, notify.Queue(pool, cfg.Notify, cfg.Delivery.Egress))
	if err != nil {
		return err
	}
	// Either stopping stops the other: a server that cannot serve does not
	// leave workers running, nor the other way round.
	g, gctx := errgroup.WithContext(ctx)
	g.Go(func() error { return runner.Run(gctx) })
	opts := []server.Option{server.WithMetrics(m)}
	if cfg.AdminDatabaseURL != cfg.DatabaseURL {
		// The read-only admin pages have a pool of their own, which may
		// reach a standby (docs/operations.md, "High availability").
		adminPool, err := connectTo(ctx, "ADMIN_DATABASE_URL", cfg.AdminDatabaseURL)
		if err != nil {
			return err
		}
		defer adminPool.Close()
		opts = append(opts, server.WithAdminReads(adminPool))
	}
	g.Go(func() error { return server.New(cfg, pool, log, opts...).Serve(gctx, ln) })
	return g.Wait()
}

// worker migrates, then runs delivery workers only until ctx is cancelled,
// then lets running attempts finish: more machines sharing the database
// deliver more at once.
func worker(ctx context.Context, cfg config.Config, log *slog.Logger, args []string) error {
	if err := noArguments("worker", args); err != nil {
		return err
	}
	pool, err := connect(ctx, cfg)
	if err != nil {
		return err
	}
	defer pool.Close()
	if err := applyMigrations(ctx, pool, log); err != nil {
		return err
	}
	m := metrics.New(pool)
	if cfg.MetricsAddr != "" {
		if err := serveMetrics(ctx, cfg, m, log); err != nil {
			return err
		}
	}
	runner, err := delivery.NewRunner(pool, cfg.Delivery, cfg.ShutdownTimeout, log, m, notify.Queue(pool, cfg.Notify, cfg.Delivery.Egress))
	if err != nil {
		return err
	}
	return runner.Run(ctx)
}

// serveMetrics serves /metrics, and with PROFILING Go's runtime profiles,
// on their own listener, kept apart from the public API, until ctx ends.
func serveMetrics(ctx context.Context, cfg config.Config, m *metrics.Metrics, log *slog.Logger) error {
	ln, err := net.Listen("tcp", cfg.MetricsAddr)
	if err != nil {
		return fmt.Errorf("METRICS_ADDR: %w", err)
	}
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", m.Handler())
	if cfg.Profiling {
		mux.HandleFunc("GET /debug/pprof/", pprof.Index)
		mux.HandleFunc("GET /debug/pprof/profile", pprof.Profile)
		mux.HandleFunc("GET /debug/pprof/trace", pprof.Trace)
		mux.HandleFunc("GET /debug/pprof/symbol", pprof.Symbol)
		mux.HandleFunc("GET /debug/pprof/cmdline", pprof.Cmdline)
	}
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second}
	go func() {
		<-ctx.Done()
		_ = srv.Close()
	}()
	go func() {
		if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			log.Error("metrics listener stopped", "error", err)
		}
	}()
	log.Info("serving metrics", "addr", ln.Addr().String(), "profiling", cfg.Profiling)
	return nil
}

// tuneGC sets the garbage collector's target and soft memory limit, each
// unless the environment sets it (GOGC, GOMEMLIMIT).
//
// The runtime's defaults collect whenever the heap has doubled, which for
// small messages means very often: the heap that is live between requests
// is small, while every request allocates its body, its JSON views and the
// driver's copies of its parameters. A target of gcPercent lets the heap
// grow five times what is live before collecting, which saves much of
// edihub's own CPU per small message (docs/performance.md). Alone,
// that would let a burst of large posts grow the heap five times as well;
// the memory limit stops that: near it the collector runs as often as it
// must, so the peak follows the bodies in process, not gcPercent.
func tuneGC(getenv func(string) string, cfg config.Config) {
	if getenv("GOGC") == "" {
		debug.SetGCPercent(gcPercent)
	}
	if getenv("GOMEMLIMIT") == "" {
		debug.SetMemoryLimit(memoryLimit(cfg.MaxBodyBytesInProcess))
	}
}

// gcPercent is the garbage collector's target unless GOGC says otherwise.
const gcPercent = 400

// memoryLimit is the soft limit of the heap unless GOMEMLIMIT says
// otherwise: what the bodies in process may hold at most (each body once
// as read and up to twice more while the driver sends it) and a base for
// everything else the server keeps (pools, caches, the admin's pages).
// It is soft: should more be live, the collector works harder (at most
// half the CPU, by the runtime's own rule) and nothing fails.
func memoryLimit(bodyBytesInProcess int64) int64 {
	return baseHeapBytes + 3*bodyBytesInProcess
}

const baseHeapBytes = 32 << 20

// warnRefusedKeyPaths logs every stored message-type setting the current
// rules refuse. Every save checks them, so such a setting was saved before
// the key-path grammar existed; ingest refuses that type's messages (422
// key-path-refused) until an admin corrects it in the editor, and this
// names them at start rather than at the first message.
func warnRefusedKeyPaths(ctx context.Context, pool *pgxpool.Pool, log *slog.Logger) error {
	rows, err := db.On(pool).MessageTypeListKeyFields(ctx)
	if err != nil {
		return fmt.Errorf("list message types' key paths: %w", err)
	}
	for _, r := range rows {
		fields := r.DuplicateKeyFields
		for _, problem := range append(messagetype.PathProblems(fields), messagetype.ListProblem(fields)) {
			if problem != nil {
				log.Warn("key path refused", "tenant", r.TenantSlug, "message_type", r.Code, "problem", problem.Error())
			}
		}
	}
	return nil
}
