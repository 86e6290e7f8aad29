// Package cli implements the edihub command line: argument parsing, wiring
// of configuration, database and server, and printing results one value per
// line so that scripts can read them.
package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"strings"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/lefia/edihub/internal/config"
	"github.com/lefia/edihub/internal/pgarray"
	"github.com/lefia/edihub/internal/schema"
)

// Env is everything a command reads from and writes to, so that tests run
// commands in-process with their own arguments, variables and buffers.
type Env struct {
	Args   []string
	Getenv func(string) string
	Stdin  io.Reader
	Stdout io.Writer
	Stderr io.Writer
	// Listening, when set, is told the address serve listens on; tests use
	// it with LISTEN_ADDR=127.0.0.1:0.
	Listening func(net.Addr)
}

const usage = `usage: edihub <command> [arguments]

commands:
  serve                       apply pending migrations, then serve HTTP on LISTEN_ADDR and run delivery workers
  worker                      apply pending migrations, then run delivery workers only
  migrate                     apply pending migrations and exit
  tenant create SLUG [--name NAME]
  env create --tenant SLUG NAME
  apikey create --tenant SLUG --env NAME
  apikey list                 one key a line: id, tenant, environment, prefix, state, created, revoked
  apikey revoke ID            the key stops working at once (within API_KEY_CACHE_TTL if a server misses the notice)
  apikey rotate ID [--grace 24h]   prints a new key of the same environment; the old one works for the grace period
  message-type create --tenant SLUG CODE [--fields '["E1EDK01.BELNR"]'] [--window-hours N]
  integration create --tenant SLUG --env NAME --message-type CODE --scheme SCHEME [--secret S]
  integration list            one secret a line: integration id, tenant, environment, message type, scheme,
                              secret id, state, created, expires ("-" for an integration without secrets)
  integration rotate ID [--grace 24h] [--secret S]   prints a new secret; the current ones work for the grace period
  integration revoke ID [--secret SECRET_ID]   every secret of the integration (or the one) stops working at once
  user create --email EMAIL --role admin|viewer [--tenant SLUG]   (password from EDIHUB_PASSWORD or stdin)
  user list                   one user a line: id, email, role, tenant, state, created, disabled
  user disable ID             the user is signed out at once and cannot sign in
  user enable ID              a disabled user can sign in again
  user reset-password ID      prints a new generated password; the user is signed out everywhere
  destination create --tenant SLUG --env NAME --url URL [--message-type CODE]... [--secret S] [--concurrency N]
  channel create [--tenant SLUG] (--email ADDR | --slack URL | --webhook URL [--secret S]) [--name NAME]
                              prints the id (and a webhook's whsec_ secret); no --tenant: a global channel
  delivery retry ID | --all-failed [--destination ID]   queue failed deliveries again; prints how many
  demo [--destination URL] [--secrets FILE]
                              create a demo tenant, API key and admin login (and a destination at URL);
                              keeps the key and login saved in FILE while they work, and saves them there

Every command reads DATABASE_URL (default ` + config.DefaultDatabaseURL + `).`

// UsageError reports a command line that cannot be understood.
type UsageError struct{ msg string }

func (e *UsageError) Error() string { return e.msg + "\n\n" + usage }

func usageErrorf(format string, args ...any) error {
	return &UsageError{msg: fmt.Sprintf(format, args...)}
}

// ExitCode is 2 for a command line that cannot be understood, 1 otherwise.
func ExitCode(err error) int {
	var u *UsageError
	if errors.As(err, &u) {
		return 2
	}
	return 1
}

// Run executes the command named by env.Args.
func Run(ctx context.Context, env Env) error {
	if len(env.Args) == 0 {
		return usageErrorf("no command given")
	}
	cfg, err := config.Load(env.Getenv)
	if err != nil {
		return fmt.Errorf("configuration: %w", err)
	}
	log := newLogger(cfg, env.Stderr)
	cmd, args := env.Args[0], env.Args[1:]
	switch cmd {
	case "serve":
		return serve(ctx, env, cfg, log, args)
	case "worker":
		return worker(ctx, cfg, log, args)
	case "delivery":
		return deliveryRetry(ctx, env, cfg, args)
	case "migrate":
		return migrate(ctx, cfg, log, args)
	case "demo":
		return demo(ctx, env, cfg, args)
	case "tenant", "env", "apikey", "message-type", "integration", "user", "destination", "channel":
		return provisioning(ctx, env, cfg, cmd, args)
	case "help", "-h", "--help":
		_, err := fmt.Fprintln(env.Stdout, usage)
		return err
	}
	return usageErrorf("unknown command %q", cmd)
}

func newLogger(cfg config.Config, w io.Writer) *slog.Logger {
	opts := &slog.HandlerOptions{Level: cfg.LogLevel}
	if cfg.LogFormat == "json" {
		return slog.New(slog.NewJSONHandler(w, opts))
	}
	return slog.New(slog.NewTextHandler(w, opts))
}

// connect opens a pool and checks that the database answers, so that a
// wrong DATABASE_URL fails at once with a clear message. tune, if given,
// adjusts the pool's settings first.
func connect(ctx context.Context, cfg config.Config, tune ...func(*pgxpool.Config)) (*pgxpool.Pool, error) {
	return connectTo(ctx, "DATABASE_URL", cfg.DatabaseURL, tune...)
}

// connectTo opens a pool on databaseURL, the setting named name.
func connectTo(ctx context.Context, name, databaseURL string, tune ...func(*pgxpool.Config)) (*pgxpool.Pool, error) {
	poolCfg, err := pgxpool.ParseConfig(databaseURL)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	// edihub's statements read a few index ranges each; PostgreSQL's JIT
	// pays off only for long scans, and it compiles whenever a plan's
	// estimate passes jit_above_cost, which estimates made without fresh
	// statistics often do, and then a dashboard statement spends longer
	// compiling than running (docs/performance.md). A DATABASE_URL may
	// still turn it on.
	if _, set := poolCfg.ConnConfig.RuntimeParams["jit"]; !set {
		poolCfg.ConnConfig.RuntimeParams["jit"] = "off"
	}
	pgarray.EncodeDirectly(poolCfg)
	for _, t := range tune {
		t(poolCfg)
	}
	pool, err := pgxpool.NewWithConfig(ctx, poolCfg)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	if err := pool.Ping(ctx); err != nil {
		pool.Close()
		return nil, fmt.Errorf("cannot reach the database (check %s): %w", name, err)
	}
	return pool, nil
}

// connectMigrated connects and refuses to work on a database whose schema
// is behind this binary's migrations.
func connectMigrated(ctx context.Context, cfg config.Config) (*pgxpool.Pool, error) {
	pool, err := connect(ctx, cfg)
	if err != nil {
		return nil, err
	}
	upToDate, err := schema.UpToDate(ctx, pool)
	if err == nil && !upToDate {
		err = errors.New("the database schema is not up to date: run `edihub migrate` first")
	}
	if err != nil {
		pool.Close()
		return nil, err
	}
	return pool, nil
}

func migrate(ctx context.Context, cfg config.Config, log *slog.Logger, args []string) error {
	if len(args) > 0 {
		return usageErrorf("migrate takes no arguments, got %q", strings.Join(args, " "))
	}
	pool, err := connect(ctx, cfg)
	if err != nil {
		return err
	}
	defer pool.Close()
	return applyMigrations(ctx, pool, log)
}

// applyMigrations applies pending migrations and logs how many it applied.
func applyMigrations(ctx context.Context, pool *pgxpool.Pool, log *slog.Logger) error {
	n, err := schema.Migrate(ctx, pool)
	if err != nil {
		return err
	}
	log.Info("migrations applied", "count", n)
	return nil
}

// parseFlags parses fs from args, allowing flags before and after the
// positional arguments (`tenant create acme --name ACME`), and returns the
// positional ones.
func parseFlags(fs *flag.FlagSet, args []string) ([]string, error) {
	fs.SetOutput(io.Discard)
	var positional []string
	for {
		if err := fs.Parse(args); err != nil {
			return nil, usageErrorf("%s: %v", fs.Name(), err)
		}
		args = fs.Args()
		if len(args) == 0 {
			return positional, nil
		}
		positional = append(positional, args[0])
		args = args[1:]
	}
}

// required reports the first of the named flags that was left empty.
func required(fs *flag.FlagSet, names ...string) error {
	for _, name := range names {
		if fs.Lookup(name).Value.String() == "" {
			return usageErrorf("%s: --%s is required", fs.Name(), name)
		}
	}
	return nil
}

func printLines(w io.Writer, lines ...string) error {
	for _, l := range lines {
		if _, err := fmt.Fprintln(w, l); err != nil {
			return err
		}
	}
	return nil
}
