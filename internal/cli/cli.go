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

// Run executes the command named by env.Args. A command line that asks for
// help (`edihub help tenant create`, `edihub tenant create --help`) prints
// the usage of what it names on stdout.
func Run(ctx context.Context, env Env) error {
	err := run(ctx, env)
	var help *helpRequest
	if errors.As(err, &help) {
		_, err = fmt.Fprintln(env.Stdout, help.usage)
	}
	return err
}

func run(ctx context.Context, env Env) error {
	if len(env.Args) == 0 {
		return usageErrorf("", "no command given")
	}
	cmd, args := env.Args[0], env.Args[1:]
	switch {
	case cmd == "--version" || cmd == "-version" || cmd == "version":
		return printLines(env.Stdout, versionLine())
	case cmd == "help":
		return &helpRequest{usage: usageOf(strings.Join(args, " "), nil)}
	case isHelp(cmd):
		return &helpRequest{usage: usageOf("", nil)}
	}
	cfg, err := config.Load(env.Getenv)
	if err != nil {
		return fmt.Errorf("configuration: %w", err)
	}
	log := newLogger(cfg, env.Stderr)
	switch cmd {
	case "serve":
		return serve(ctx, env, cfg, log, args)
	case "worker":
		return worker(ctx, cfg, log, args)
	case "migrate":
		return migrate(ctx, cfg, log, args)
	case "demo":
		return demo(ctx, env, cfg, args)
	case "delivery":
		return deliveryCommand(ctx, env, cfg, args)
	case "tenant", "env", "apikey", "message-type", "integration", "user", "destination", "channel":
		return provisioning(ctx, env, cfg, cmd, args)
	}
	return usageErrorf("", "unknown command %q", cmd)
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
	if err := noArguments("migrate", args); err != nil {
		return err
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
		err := fs.Parse(args)
		if errors.Is(err, flag.ErrHelp) {
			return nil, &helpRequest{usage: usageOf(fs.Name(), fs)}
		}
		if err != nil {
			return nil, flagErrorf(fs, "%v", err)
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
			return flagErrorf(fs, "--%s is required", name)
		}
	}
	return nil
}

// noArguments refuses arguments to a command that takes none, which is
// configured through environment variables instead; it answers --help.
func noArguments(name string, args []string) error {
	pos, err := parseFlags(flag.NewFlagSet(name, flag.ContinueOnError), args)
	if err == nil && len(pos) > 0 {
		err = usageErrorf(name, "takes no arguments (it is configured through environment variables), got %q", strings.Join(pos, " "))
	}
	return err
}

func printLines(w io.Writer, lines ...string) error {
	for _, l := range lines {
		if _, err := fmt.Fprintln(w, l); err != nil {
			return err
		}
	}
	return nil
}
