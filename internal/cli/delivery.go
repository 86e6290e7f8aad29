package cli

import (
	"context"
	"flag"
	"fmt"
	"strconv"

	"github.com/lefia/edihub/internal/auditevent"
	"github.com/lefia/edihub/internal/auth"
	"github.com/lefia/edihub/internal/config"
	"github.com/lefia/edihub/internal/delivery"
	"github.com/lefia/edihub/internal/provision"
)

// deliveryCommand runs `delivery list` and `delivery retry`.
func deliveryCommand(ctx context.Context, env Env, cfg config.Config, args []string) error {
	switch {
	case len(args) == 0:
		return usageErrorf("delivery", "give a subcommand")
	case isHelp(args[0]):
		return &helpRequest{usage: usageOf("delivery", nil)}
	case args[0] == "list":
		return deliveryList(ctx, env, cfg, args[1:])
	case args[0] == "retry":
		return deliveryRetry(ctx, env, cfg, args[1:])
	}
	return usageErrorf("delivery", "unknown subcommand %q", args[0])
}

// maxListed bounds `delivery list --limit`: a table longer than that is
// read with a filter, not scrolled.
const maxListed = 1000

// deliveryList prints the newest deliveries that the filters match as a
// table, within the tenant given (default: every tenant).
func deliveryList(ctx context.Context, env Env, cfg config.Config, args []string) error {
	fs := flag.NewFlagSet("delivery list", flag.ContinueOnError)
	tenant := fs.String("tenant", "", "list only this tenant's (default: every tenant's)")
	var f delivery.Filter
	fs.StringVar(&f.Status, "status", "", "only deliveries with this status: pending, delivered or failed")
	fs.StringVar(&f.Destination, "destination", "", "only deliveries to the destination with this id")
	fs.StringVar(&f.MessageType, "message-type", "", "only deliveries of messages of this type (a code)")
	limit := fs.Int("limit", delivery.PageSize, fmt.Sprintf("list at most this many, from 1 to %d", maxListed))
	if _, err := positionals(fs, args); err != nil {
		return err
	}
	if *limit < 1 || *limit > maxListed {
		return flagErrorf(fs, "--limit must be from 1 to %d", maxListed)
	}
	pool, err := connectMigrated(ctx, cfg)
	if err != nil {
		return err
	}
	defer pool.Close()
	scope, err := provision.New(pool).ScopeOf(ctx, *tenant)
	if err != nil {
		return err
	}
	page, err := delivery.NewService(pool, cfg.Delivery.MaxAttempts).ListUpTo(ctx, scope, f, *limit)
	if err != nil {
		return err
	}
	if len(page.Problems) > 0 {
		return flagErrorf(fs, "%s", page.Problems[0])
	}
	rows := make([][]string, len(page.Deliveries))
	for i, d := range page.Deliveries {
		answer := "-"
		if d.LastAnswer != nil {
			answer = strconv.Itoa(int(*d.LastAnswer))
		}
		rows[i] = []string{
			strconv.FormatInt(d.ID, 10), timeText(&d.Created), d.Status, strconv.Itoa(int(d.Attempts)), d.Tenant, d.Environment,
			d.MessageType, orNone(d.Docnum), strconv.FormatInt(d.DestinationID, 10), d.DestinationURL, answer, orNone(d.LastError),
		}
	}
	return printLines(env.Stdout, table([]string{
		"ID", "CREATED", "STATUS", "ATTEMPTS", "TENANT", "ENVIRONMENT", "TYPE", "DOCNUM", "DESTINATION", "URL", "LAST ANSWER", "LAST ERROR",
	}, rows)...)
}

// deliveryRetry runs `delivery retry ID` or `delivery retry --all-failed
// [--destination ID]`: failed deliveries get a new round of attempts. It
// prints how many were queued; a delivery that is not failed is not.
func deliveryRetry(ctx context.Context, env Env, cfg config.Config, args []string) error {
	fs := flag.NewFlagSet("delivery retry", flag.ContinueOnError)
	all := fs.Bool("all-failed", false, "retry every failed delivery")
	destination := fs.Int64("destination", 0, "with --all-failed: only this destination's")
	pos, err := parseFlags(fs, args)
	if err != nil {
		return err
	}
	var id, destinationID *int64
	switch {
	case *all && len(pos) == 0:
		if *destination != 0 {
			destinationID = destination
		}
	case !*all && len(pos) == 1 && *destination == 0:
		n, err := strconv.ParseInt(pos[0], 10, 64)
		if err != nil {
			return flagErrorf(fs, "%q is not a delivery id", pos[0])
		}
		id = &n
	default:
		return flagErrorf(fs, "give one delivery id, or --all-failed [--destination ID]")
	}
	pool, err := connectMigrated(ctx, cfg)
	if err != nil {
		return err
	}
	defer pool.Close()
	service := delivery.NewService(pool, cfg.Delivery.MaxAttempts)
	n, err := service.Retry(ctx, auditevent.ActorCLI, auth.GlobalScope(), delivery.Match{ID: id, DestinationID: destinationID})
	if err != nil {
		return err
	}
	if id != nil && n == 0 {
		// Nothing was queued: a delivery that is not failed is left as it
		// is, but an id that names no delivery is a mistake to report.
		status, err := service.StatusOf(ctx, auth.GlobalScope(), *id)
		if err != nil {
			return err
		}
		if _, err := fmt.Fprintf(env.Stderr, "delivery %d is %s, not failed: nothing to queue\n", *id, status); err != nil {
			return err
		}
	}
	return printLines(env.Stdout, strconv.Itoa(n))
}
