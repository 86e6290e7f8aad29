package cli

import (
	"context"
	"flag"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/lefia/edihub/internal/auth"
	"github.com/lefia/edihub/internal/identifier"
	"github.com/lefia/edihub/internal/provision"
)

// table aligns rows under header in columns two spaces apart, for people
// to read. Each cell shows its hidden characters as escapes, so that a tab
// or a terminal's control sequence in a stored name cannot break the table.
func table(header []string, rows [][]string) []string {
	var b strings.Builder
	w := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
	for _, row := range append([][]string{header}, rows...) {
		cells := make([]string, len(row))
		for i, c := range row {
			cells[i] = identifier.Visible(c)
		}
		_, _ = w.Write([]byte(strings.Join(cells, "\t") + "\n")) // a strings.Builder takes every write
	}
	_ = w.Flush()
	return strings.Split(strings.TrimSuffix(b.String(), "\n"), "\n")
}

// orNone is s, or "-" when it is empty, so that every cell shows something.
func orNone(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// scopedList parses `<noun> list [--tenant SLUG]` and lists what the
// tenant's admins see (with no --tenant, every tenant's) as a table.
func scopedList(name string, args []string, list func(context.Context, *provision.Service, auth.Scope) ([]string, error)) (action, error) {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	tenant := fs.String("tenant", "", "list only this tenant's (default: every tenant's)")
	if _, err := positionals(fs, args); err != nil {
		return nil, err
	}
	return func(ctx context.Context, s *provision.Service) ([]string, error) {
		scope, err := s.ScopeOf(ctx, *tenant)
		if err != nil {
			return nil, err
		}
		return list(ctx, s, scope)
	}, nil
}

func tenantList(name string, args []string) (action, error) {
	if _, err := positionals(flag.NewFlagSet(name, flag.ContinueOnError), args); err != nil {
		return nil, err
	}
	return func(ctx context.Context, s *provision.Service) ([]string, error) {
		tenants, err := s.Tenants(ctx, provision.ByCLI.Scope)
		rows := make([][]string, len(tenants))
		for i, t := range tenants {
			rows[i] = []string{t.Slug, t.Name, timeText(&t.CreatedAt)}
		}
		return table([]string{"SLUG", "NAME", "CREATED"}, rows), err
	}, nil
}

func envList(ctx context.Context, s *provision.Service, scope auth.Scope) ([]string, error) {
	places, err := s.Places(ctx, scope)
	rows := make([][]string, len(places))
	for i, p := range places {
		rows[i] = []string{p.Tenant, p.Environment}
	}
	return table([]string{"TENANT", "ENVIRONMENT"}, rows), err
}

func messageTypeList(ctx context.Context, s *provision.Service, scope auth.Scope) ([]string, error) {
	types, err := s.MessageTypes(ctx, scope)
	rows := make([][]string, len(types))
	for i, mt := range types {
		rows[i] = []string{mt.Tenant, mt.Code, strconv.Itoa(mt.WindowHours) + "h", orNone(strings.Join(mt.KeyPaths, " "))}
	}
	return table([]string{"TENANT", "CODE", "WINDOW", "KEY PATHS"}, rows), err
}

func destinationList(ctx context.Context, s *provision.Service, scope auth.Scope) ([]string, error) {
	destinations, err := s.Destinations(ctx, scope)
	rows := make([][]string, len(destinations))
	for i, d := range destinations {
		state := "running"
		switch {
		case d.AutoPaused != nil:
			state = "auto-paused"
		case d.Paused:
			state = "paused"
		}
		types := "every type"
		if len(d.MessageTypes) > 0 {
			types = strings.Join(d.MessageTypes, " ")
		}
		rows[i] = []string{strconv.FormatInt(d.ID, 10), d.Tenant, d.Environment, d.URL, types, state, strconv.Itoa(int(d.MaxConcurrency))}
	}
	return table([]string{"ID", "TENANT", "ENVIRONMENT", "URL", "MESSAGE TYPES", "STATE", "CONCURRENCY"}, rows), err
}

func channelList(ctx context.Context, s *provision.Service, scope auth.Scope) ([]string, error) {
	channels, err := s.Channels(ctx, scope)
	rows := make([][]string, len(channels))
	for i, c := range channels {
		rows[i] = []string{strconv.FormatInt(c.ID, 10), orNone(c.Tenant), c.Kind, c.Name, c.Target}
	}
	return table([]string{"ID", "TENANT", "KIND", "NAME", "TARGET"}, rows), err
}
