// Command edihub-load drives a running edihub with concurrent clients and
// reports throughput, latency and the server's memory; `make bench` runs it
// (see docs/performance.md).
//
//	edihub-load run -url URL -key KEY -mix new|duplicate|replay -clients N [-duration 10s -warmup 2s | -requests N]
//	                [-form envelope|batch|packet|x12|edifact -per-request N]
//	edihub-load payload -size BYTES     # the payload of one message, for pgbench
//	edihub-load report -rows FILE -pgbench FILE [-memory FILE]
//	edihub-load admin -url URL -email EMAIL -password PASSWORD -pages FILE [-runs N] [-explain-log FILE -explain-db NAME]
//	edihub-load floor -tenant ID -env ID -message-type ID [-listen ADDR]   # DATABASE_URL; see floor.Floor
package main

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/lefia/edihub/internal/db"
	"github.com/lefia/edihub/internal/floor"
	"github.com/lefia/edihub/internal/loadgen"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Args[1:], os.Stdout, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "edihub-load:", err)
		os.Exit(1)
	}
}

const usage = "usage: edihub-load run|payload|report|admin|floor [flags]; -h after a command lists its flags"

func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		return errors.New(usage)
	}
	switch args[0] {
	case "run":
		return runLoad(ctx, args[1:], stdout, stderr)
	case "payload":
		return printPayload(args[1:], stdout, stderr)
	case "report":
		return printReport(args[1:], stdout, stderr)
	case "admin":
		return timeAdmin(ctx, args[1:], stdout, stderr)
	case "floor":
		return serveFloor(ctx, args[1:], stderr)
	}
	return fmt.Errorf("unknown command %q; %s", args[0], usage)
}

// runLoad runs one load row and prints its result as one JSON line.
func runLoad(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("run", flag.ContinueOnError)
	fs.SetOutput(stderr)
	cfg := loadgen.Config{Progress: stderr}
	fs.StringVar(&cfg.URL, "url", "http://127.0.0.1:8080", "edihub base URL")
	fs.StringVar(&cfg.APIKey, "key", "", "API key of the bench environment")
	mix := fs.String("mix", "new", "new, duplicate or replay (batches, packets and interchanges: new or duplicate, each request sent again whole)")
	form := fs.String("form", "envelope", "envelope (one JSON message), batch (JSON, receive-messages), packet (IDoc-XML), x12 (850s) or edifact (ORDERS)")
	fs.IntVar(&cfg.PerRequest, "per-request", 1, "messages per request: envelopes in a batch, IDocs in a packet, transaction sets in an interchange")
	fs.IntVar(&cfg.Clients, "clients", 1, "concurrent clients")
	fs.DurationVar(&cfg.Warmup, "warmup", 2*time.Second, "unmeasured time first")
	fs.DurationVar(&cfg.Duration, "duration", 10*time.Second, "measured time")
	fs.IntVar(&cfg.Requests, "requests", 0, "requests per client instead of a duration")
	fs.IntVar(&cfg.PayloadSize, "payload-size", 2048, "bytes of each message's payload")
	fs.IntVar(&cfg.ServerPID, "server-pid", 0, "process whose memory to sample and CPU time to measure, with PostgreSQL's (0: none)")
	fs.StringVar(&cfg.PostgresDatabase, "postgres-database", "", "count the CPU time of this database's PostgreSQL backends only (\"\": of every database)")
	fs.StringVar(&cfg.Label, "label", "", "names the server in the report when it is not edihub (e.g. floor)")
	fs.IntVar(&cfg.Round, "round", 0, "the round of the comparison with the floor this row belongs to, for the report's targets (0: none)")
	fs.Float64Var(&cfg.Rate, "rate", 0, "requests per second of all clients together, on a fixed schedule (0: as fast as answers come)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	var err error
	if cfg.Mix, err = loadgen.ParseMix(*mix); err != nil {
		return err
	}
	if cfg.Form, err = loadgen.ParseForm(*form); err != nil {
		return err
	}
	res, err := loadgen.Run(ctx, cfg)
	if err != nil {
		return err
	}
	return json.NewEncoder(stdout).Encode(res)
}

// printPayload prints the payload loadgen posts, so that pgbench inserts
// the same bytes.
func printPayload(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("payload", flag.ContinueOnError)
	fs.SetOutput(stderr)
	size := fs.Int("size", 2048, "bytes of the payload")
	if err := fs.Parse(args); err != nil {
		return err
	}
	_, err := stdout.Write(loadgen.NewDocument(*size).Payload(1))
	return err
}

// printReport prints the table of a whole bench from the files the run and
// pgbench steps wrote.
func printReport(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("report", flag.ContinueOnError)
	fs.SetOutput(stderr)
	rows := fs.String("rows", "", "JSON lines of edihub-load run results")
	pgbench := fs.String("pgbench", "", "JSON lines of pgbench results")
	memory := fs.String("memory", "", "JSON line of the large-payload run (optional)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	var rep loadgen.Report
	var err error
	if rep.Rows, err = loadgen.ReadJSONLines[loadgen.Result](*rows); err != nil {
		return err
	}
	if rep.Pgbench, err = loadgen.ReadJSONLines[loadgen.Pgbench](*pgbench); err != nil {
		return err
	}
	if *memory != "" {
		m, err := loadgen.ReadJSONLines[loadgen.Result](*memory)
		if err != nil {
			return err
		}
		if len(m) > 0 {
			rep.Memory = &m[0]
		}
	}
	return rep.Write(stdout)
}

// timeAdmin signs in and times each admin page of a list, printing one
// JSON line per page (`make bench/admin`). With -explain-log it reads each
// page once more instead and adds the plan of its slowest statement.
func timeAdmin(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("admin", flag.ContinueOnError)
	fs.SetOutput(stderr)
	base := fs.String("url", "http://127.0.0.1:8080", "edihub base URL")
	email := fs.String("email", "", "the admin to sign in as")
	password := fs.String("password", "", "the admin's password")
	user := fs.String("user", "", "the label of the user in the report (default: the email)")
	pagesFile := fs.String("pages", "", "the pages, one a line: name path")
	runs := fs.Int("runs", 20, "measured reads of each page, after one unmeasured")
	explainLog := fs.String("explain-log", "", "PostgreSQL's log, where auto_explain writes plans")
	explainDB := fs.String("explain-db", "", "with -explain-log: the database whose plans count")
	if err := fs.Parse(args); err != nil {
		return err
	}
	f, err := os.Open(*pagesFile)
	if err != nil {
		return err
	}
	pages, err := loadgen.ReadAdminPages(f)
	f.Close()
	if err != nil {
		return err
	}
	c, err := loadgen.SignIn(ctx, *base, *email, *password)
	if err != nil {
		return err
	}
	label := cmp.Or(*user, *email)
	enc := json.NewEncoder(stdout)
	for _, page := range pages {
		var t loadgen.AdminTiming
		if *explainLog != "" {
			t = loadgen.AdminTiming{User: label, Page: page.Name, Path: page.Path}
			t.Plan, err = c.SlowestPlan(ctx, page, *explainLog, *explainDB)
		} else {
			t, err = c.Time(ctx, label, page, *runs)
		}
		if err != nil {
			return fmt.Errorf("%s: %w", page.Name, err)
		}
		fmt.Fprintf(stderr, "  %-8s %-26s %4d %8.1f ms median %8.1f ms p95\n", label, page.Name, t.Status, t.P50, t.P95)
		if err := enc.Encode(t); err != nil {
			return err
		}
	}
	return nil
}

// serveFloor serves floor.Floor on DATABASE_URL until ctx ends, logging
// "listening addr=…" as edihub serve does, so that the bench scripts start
// and find both alike.
func serveFloor(ctx context.Context, args []string, stderr io.Writer) error {
	fs := flag.NewFlagSet("floor", flag.ContinueOnError)
	fs.SetOutput(stderr)
	listen := fs.String("listen", "127.0.0.1:0", "address to serve on")
	var bare floor.Floor
	fs.Int64Var(&bare.TenantID, "tenant", 0, "the bench tenant's id")
	fs.Int64Var(&bare.EnvironmentID, "env", 0, "the bench environment's id")
	fs.Int64Var(&bare.MessageTypeID, "message-type", 0, "the bench message type's id")
	if err := fs.Parse(args); err != nil {
		return err
	}
	databaseURL := os.Getenv("DATABASE_URL")
	cfg, err := pgxpool.ParseConfig(databaseURL)
	if err != nil {
		return fmt.Errorf("DATABASE_URL: %w", err)
	}
	db.SizeIngestPool(cfg, databaseURL)
	if bare.Pool, err = pgxpool.NewWithConfig(ctx, cfg); err != nil {
		return err
	}
	defer bare.Pool.Close()
	ln, err := net.Listen("tcp", *listen)
	if err != nil {
		return err
	}
	slog.New(slog.NewTextHandler(stderr, nil)).Info("listening", "addr", ln.Addr().String())
	srv := &http.Server{Handler: bare, ReadHeaderTimeout: 10 * time.Second}
	go func() {
		<-ctx.Done()
		_ = srv.Close()
	}()
	if err := srv.Serve(ln); !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}
