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
)

// deliveryRetry runs `delivery retry ID` or `delivery retry --all-failed
// [--destination ID]`: failed deliveries get a new round of attempts. It
// prints how many were queued; a delivery that is not failed is not.
func deliveryRetry(ctx context.Context, env Env, cfg config.Config, args []string) error {
	if len(args) == 0 || args[0] != "retry" {
		return usageErrorf("delivery: the only subcommand is retry")
	}
	fs := flag.NewFlagSet("delivery retry", flag.ContinueOnError)
	all := fs.Bool("all-failed", false, "retry every failed delivery")
	destination := fs.Int64("destination", 0, "with --all-failed: only this destination's")
	pos, err := parseFlags(fs, args[1:])
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
			return usageErrorf("delivery retry: %q is not a delivery id", pos[0])
		}
		id = &n
	default:
		return usageErrorf("delivery retry: give one delivery id, or --all-failed [--destination ID]")
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
