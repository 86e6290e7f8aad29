package cli

import (
	"context"
	"flag"
	"strconv"

	"github.com/lefia/edihub/internal/config"
	"github.com/lefia/edihub/internal/provision"
)

// demo prints name=value lines, one value per line, so that a script can
// pick the API key and the login out of them.
func demo(ctx context.Context, env Env, cfg config.Config, args []string) error {
	fs := flag.NewFlagSet("demo", flag.ContinueOnError)
	receiver := fs.String("destination", "", "URL of a receiver the demo's production environment delivers to (e.g. edihub-receiver's)")
	if _, err := positionals(fs, args); err != nil {
		return err
	}
	pool, err := connectMigrated(ctx, cfg)
	if err != nil {
		return err
	}
	defer pool.Close()
	d, err := provision.New(pool).Demo(ctx, *receiver, cfg.Delivery.Egress)
	if err != nil {
		return err
	}
	lines := []string{
		"tenant=" + d.Tenant,
		"environment=" + d.Environment,
		"api_key=" + d.APIKey,
		"admin_email=" + d.AdminEmail,
		"admin_password=" + d.AdminPassword,
	}
	if d.DestinationID != 0 {
		lines = append(lines, "destination_id="+strconv.FormatInt(d.DestinationID, 10))
	}
	return printLines(env.Stdout, lines...)
}
