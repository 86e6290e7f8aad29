package cli

import (
	"context"

	"github.com/lefia/edihub/internal/config"
	"github.com/lefia/edihub/internal/provision"
)

// demo prints name=value lines, one value per line, so that a script can
// pick the API key and the login out of them.
func demo(ctx context.Context, env Env, cfg config.Config, args []string) error {
	if len(args) > 0 {
		return usageErrorf("demo takes no arguments")
	}
	pool, err := connectMigrated(ctx, cfg)
	if err != nil {
		return err
	}
	defer pool.Close()
	d, err := provision.New(pool).Demo(ctx)
	if err != nil {
		return err
	}
	return printLines(env.Stdout,
		"tenant="+d.Tenant,
		"environment="+d.Environment,
		"api_key="+d.APIKey,
		"admin_email="+d.AdminEmail,
		"admin_password="+d.AdminPassword,
	)
}
