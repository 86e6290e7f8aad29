package cli

import (
	"context"
	"log/slog"
	"net"

	"github.com/lefia/edihub/internal/config"
	"github.com/lefia/edihub/internal/retention"
	"github.com/lefia/edihub/internal/schema"
	"github.com/lefia/edihub/internal/server"
)

// serve migrates, then serves until ctx is cancelled (SIGTERM), then lets
// in-flight requests finish.
func serve(ctx context.Context, env Env, cfg config.Config, log *slog.Logger, args []string) error {
	if len(args) > 0 {
		return usageErrorf("serve takes no arguments; it is configured through environment variables")
	}
	pool, err := connect(ctx, cfg)
	if err != nil {
		return err
	}
	defer pool.Close()
	n, err := schema.Migrate(ctx, pool)
	if err != nil {
		return err
	}
	log.Info("migrations applied", "count", n)

	ln, err := net.Listen("tcp", cfg.ListenAddr)
	if err != nil {
		return err
	}
	log.Info("listening", "addr", ln.Addr().String())
	if env.Listening != nil {
		env.Listening(ln.Addr())
	}
	// The sweeper stops with the server: its context ends on SIGTERM, and a
	// batch cut short is rolled back whole.
	go retention.NewSweeper(pool, log, cfg.SweepBatchSize, cfg.SweepInterval).Run(ctx)
	return server.New(cfg, pool, log).Serve(ctx, ln)
}
