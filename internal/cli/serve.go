package cli

import (
	"context"
	"log/slog"
	"net"
	"runtime"
	"runtime/debug"
	"strings"

	"github.com/jackc/pgx/v5/pgxpool"

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
	if env.Getenv("GOGC") == "" {
		debug.SetGCPercent(gcPercent)
	}
	pool, err := connect(ctx, cfg, func(c *pgxpool.Config) { sizePool(c, cfg.DatabaseURL) })
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

// poolConnsPerCore sizes the server's pool unless DATABASE_URL does
// (pool_max_conns). pgxpool's default of one connection per core (at least
// four) suits work that keeps a connection busy on the CPU, but an ingest
// request holds its connection mostly while PostgreSQL flushes the commit to
// disk and while bytes cross the socket; with more connections in flight,
// more commits share one flush. docs/performance.md has the measurements.
const poolConnsPerCore = 8

func sizePool(c *pgxpool.Config, databaseURL string) {
	if !strings.Contains(databaseURL, "pool_max_conns") {
		c.MaxConns = int32(max(4, poolConnsPerCore*runtime.GOMAXPROCS(0)))
	}
}

// gcPercent is the garbage collector's target unless GOGC says otherwise.
// The runtime's default of 100 lets the heap grow to twice what is live
// before collecting. While large messages arrive, what is live is mostly
// their bodies and the copies the driver encodes them into: byte slices
// without pointers, which cost the collector next to nothing to scan. A
// lower target therefore cuts the peak memory of large posts by a quarter
// for little CPU (docs/performance.md).
const gcPercent = 50
