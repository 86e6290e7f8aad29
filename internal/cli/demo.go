package cli

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/lefia/edihub/internal/config"
	"github.com/lefia/edihub/internal/provision"
)

// demo prints name=value lines, one value per line, so that a script can
// pick the API key and the login out of them. With --secrets FILE it keeps
// the secrets of the run that wrote FILE while they still work, and writes
// the lines it prints to FILE, readable by its owner only: `make run`
// prints the same login on every run, and a login written down earlier
// keeps working. An admin whose password FILE does not hold keeps it, since
// it may be another run's, unless --reset-password says this database is
// the caller's own. It also prints what the database held before (found_*)
// and the production environment's destinations other than --destination
// (other_destination=ID URL).
func demo(ctx context.Context, env Env, cfg config.Config, args []string) error {
	flags := flag.NewFlagSet("demo", flag.ContinueOnError)
	receiver := flags.String("destination", "", "URL of a receiver the demo's production environment delivers to (e.g. edihub-receiver's)")
	secretsFile := flags.String("secrets", "", "file holding the secrets of an earlier run, to keep; rewritten with this run's output")
	req := provision.DemoRequest{}
	flags.BoolVar(&req.ResetPassword, "reset-password", false,
		"give an existing demo admin whose password the secrets file does not hold a new one (default: leave its login alone)")
	if _, err := positionals(flags, args); err != nil {
		return err
	}
	req.ReceiverURL = *receiver
	if *secretsFile != "" {
		var err error
		if req.Keep, err = readDemoSecrets(*secretsFile); err != nil {
			return err
		}
	}
	pool, err := connectMigrated(ctx, cfg)
	if err != nil {
		return err
	}
	defer pool.Close()
	d, err := provision.New(pool).Demo(ctx, req, cfg.Delivery.Egress)
	if err != nil {
		return err
	}
	lines := []string{
		"tenant=" + d.Tenant,
		"environment=" + d.Environment,
		"api_key=" + d.APIKey,
		"admin_email=" + d.AdminEmail,
		"admin_id=" + strconv.FormatInt(d.AdminID, 10),
		"admin_password=" + d.AdminPassword,
		"api_key_status=" + string(d.APIKeyStatus),
		"admin_password_status=" + string(d.AdminPasswordStatus),
	}
	if d.DestinationID != 0 {
		// The receiver checks each delivery's signature with the secret
		// (edihub-receiver -secret, or EDIHUB_RECEIVER_SECRET).
		lines = append(lines, "destination_id="+strconv.FormatInt(d.DestinationID, 10), "destination_secret="+d.DestinationSecret)
	}
	lines = append(lines, "webhook_integration="+d.WebhookIntegration, "webhook_secret="+d.WebhookSecret)
	for _, other := range d.OtherDestinations {
		lines = append(lines, fmt.Sprintf("other_destination=%d %s", other.ID, other.URL))
	}
	lines = append(lines,
		"found_tenants="+strconv.FormatInt(d.Found.Tenants, 10),
		"found_messages="+strconv.FormatInt(d.Found.Messages, 10),
		"found_api_keys="+strconv.FormatInt(d.Found.ApiKeys, 10),
		"found_destinations="+strconv.FormatInt(d.Found.Destinations, 10),
	)
	if *secretsFile != "" {
		if err := writeDemoSecrets(*secretsFile, lines); err != nil {
			return err
		}
	}
	return printLines(env.Stdout, lines...)
}

// readDemoSecrets reads the api_key and admin_password lines of a file
// demo wrote; a missing file holds none.
func readDemoSecrets(path string) (provision.DemoSecrets, error) {
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return provision.DemoSecrets{}, nil
	}
	if err != nil {
		return provision.DemoSecrets{}, fmt.Errorf("demo secrets: %w", err)
	}
	defer f.Close()
	var s provision.DemoSecrets
	lines := bufio.NewScanner(f)
	for lines.Scan() {
		switch name, value, _ := strings.Cut(lines.Text(), "="); name {
		case "api_key":
			s.APIKey = value
		case "admin_password":
			s.AdminPassword = value
		}
	}
	if err := lines.Err(); err != nil {
		return provision.DemoSecrets{}, fmt.Errorf("demo secrets %s: %w", path, err)
	}
	return s, nil
}

// writeDemoSecrets replaces path with lines, mode 0600 in a directory
// created with mode 0700, through a rename so that a reader never sees half
// a file. The directories above it are made as any other (0755 less the
// umask): .data/ also holds the clusters of make run and make run-ha, which
// the postgres user must reach.
func writeDemoSecrets(path string, lines []string) error {
	dir := filepath.Dir(path)
	if err := os.MkdirAll(filepath.Dir(dir), 0o755); err != nil {
		return fmt.Errorf("demo secrets: %w", err)
	}
	if err := os.Mkdir(dir, 0o700); err != nil && !errors.Is(err, fs.ErrExist) {
		return fmt.Errorf("demo secrets: %w", err)
	}
	tmp, err := os.CreateTemp(dir, filepath.Base(path)+".*") // created with mode 0600
	if err != nil {
		return fmt.Errorf("demo secrets: %w", err)
	}
	defer func() { _ = os.Remove(tmp.Name()) }() // fails harmlessly after the rename
	_, err = tmp.WriteString(strings.Join(lines, "\n") + "\n")
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp.Name(), path)
	}
	if err != nil {
		return fmt.Errorf("demo secrets: %w", err)
	}
	return nil
}
