package cli

import (
	"context"
	"flag"
	"strconv"
	"strings"
	"time"

	"github.com/lefia/edihub/internal/provision"
)

// manageAction parses the verbs that manage what exists: list, revoke,
// rotate, and for users disable, enable and reset-password. Each change is
// made with the CLI's global scope and recorded as the CLI's.
func manageAction(noun, verb, name string, args []string) (action, error) {
	switch noun + " " + verb {
	case "tenant list":
		return tenantList(name, args)
	case "env list":
		return scopedList(name, args, envList)
	case "message-type list":
		return scopedList(name, args, messageTypeList)
	case "destination list":
		return scopedList(name, args, destinationList)
	case "channel list":
		return scopedList(name, args, channelList)
	case "apikey list":
		return apikeyList(name, args)
	case "apikey revoke":
		return apikeyRevoke(name, args)
	case "apikey rotate":
		return apikeyRotate(name, args)
	case "user list":
		return userList(name, args)
	case "user disable":
		return byID(name, args, (*provision.Service).DisableUser)
	case "user enable":
		return byID(name, args, (*provision.Service).EnableUser)
	case "user reset-password":
		return userResetPassword(name, args)
	case "integration list":
		return integrationList(name, args)
	case "integration rotate":
		return integrationRotate(name, args)
	case "integration revoke":
		return integrationRevoke(name, args)
	}
	return nil, usageErrorf(noun, "unknown subcommand %q", verb)
}

// timeText prints a time for scripts: RFC 3339 in UTC, "-" for none.
func timeText(t *time.Time) string {
	if t == nil {
		return "-"
	}
	return t.UTC().Format(time.RFC3339)
}

func apikeyList(name string, args []string) (action, error) {
	if _, err := positionals(flag.NewFlagSet(name, flag.ContinueOnError), args); err != nil {
		return nil, err
	}
	return func(ctx context.Context, s *provision.Service) ([]string, error) {
		keys, err := s.APIKeys(ctx, provision.ByCLI.Scope)
		if err != nil {
			return nil, err
		}
		now := time.Now()
		lines := make([]string, len(keys))
		for i, k := range keys {
			lines[i] = strings.Join([]string{
				strconv.FormatInt(k.ID, 10), k.TenantSlug, k.EnvironmentSlug, k.KeyPrefix,
				provision.APIKeyState(k, now), timeText(&k.CreatedAt), timeText(k.RevokedAt), timeText(k.LastUsedAt), k.Name,
			}, "\t")
		}
		return lines, nil
	}, nil
}

// idArgument parses the one positional argument, a numeric id.
func idArgument(fs *flag.FlagSet, args []string) (int64, error) {
	pos, err := positionals(fs, args, "ID")
	if err != nil {
		return 0, err
	}
	id, err := strconv.ParseInt(pos[0], 10, 64)
	if err != nil {
		return 0, flagErrorf(fs, "%q is not an id", pos[0])
	}
	return id, nil
}

func apikeyRevoke(name string, args []string) (action, error) {
	return byID(name, args, (*provision.Service).RevokeAPIKey)
}

// byID is a verb that takes an id and prints nothing: change, made as the
// CLI.
func byID(name string, args []string, change func(*provision.Service, context.Context, provision.By, int64) error) (action, error) {
	id, err := idArgument(flag.NewFlagSet(name, flag.ContinueOnError), args)
	if err != nil {
		return nil, err
	}
	return func(ctx context.Context, s *provision.Service) ([]string, error) {
		return nil, change(s, ctx, provision.ByCLI, id)
	}, nil
}

func apikeyRotate(name string, args []string) (action, error) {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	grace := fs.Duration("grace", 24*time.Hour, "how long the old key keeps working (0: it stops at once)")
	id, err := idArgument(fs, args)
	if err != nil {
		return nil, err
	}
	return func(ctx context.Context, s *provision.Service) ([]string, error) {
		key, err := s.RotateAPIKey(ctx, provision.ByCLI, id, *grace)
		return []string{key}, err
	}, nil
}

func userList(name string, args []string) (action, error) {
	if _, err := positionals(flag.NewFlagSet(name, flag.ContinueOnError), args); err != nil {
		return nil, err
	}
	return func(ctx context.Context, s *provision.Service) ([]string, error) {
		users, err := s.Users(ctx, provision.ByCLI.Scope)
		if err != nil {
			return nil, err
		}
		lines := make([]string, len(users))
		for i, u := range users {
			tenant := "-"
			if u.TenantSlug != nil {
				tenant = *u.TenantSlug
			}
			lines[i] = strings.Join([]string{
				strconv.FormatInt(u.ID, 10), u.Email, u.Role, tenant,
				provision.UserState(u), timeText(&u.CreatedAt), timeText(u.DisabledAt),
			}, "\t")
		}
		return lines, nil
	}, nil
}

func userResetPassword(name string, args []string) (action, error) {
	id, err := idArgument(flag.NewFlagSet(name, flag.ContinueOnError), args)
	if err != nil {
		return nil, err
	}
	return func(ctx context.Context, s *provision.Service) ([]string, error) {
		pw, err := s.ResetPassword(ctx, provision.ByCLI, id)
		return []string{pw}, err
	}, nil
}

func integrationList(name string, args []string) (action, error) {
	if _, err := positionals(flag.NewFlagSet(name, flag.ContinueOnError), args); err != nil {
		return nil, err
	}
	return func(ctx context.Context, s *provision.Service) ([]string, error) {
		list, err := s.Integrations(ctx, provision.ByCLI.Scope)
		if err != nil {
			return nil, err
		}
		now := time.Now()
		var lines []string
		for _, in := range list {
			head := []string{in.ID.String(), in.TenantSlug, in.EnvironmentSlug, in.MessageTypeCode, in.Scheme}
			if len(in.Secrets) == 0 {
				lines = append(lines, strings.Join(append(head, "-", "-", "-", "-"), "\t"))
			}
			for _, sec := range in.Secrets {
				lines = append(lines, strings.Join(append(head,
					strconv.FormatInt(sec.ID, 10), provision.CredentialState(sec.ExpiresAt, now),
					timeText(&sec.CreatedAt), timeText(sec.ExpiresAt)), "\t"))
			}
		}
		return lines, nil
	}, nil
}

func integrationRotate(name string, args []string) (action, error) {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	grace := fs.Duration("grace", 24*time.Hour, "how long the current secrets keep working (0: they stop at once)")
	secret := fs.String("secret", "", "the sender's new secret (Stripe and Shopify issue theirs; default: generate one)")
	pos, err := positionals(fs, args, "ID")
	if err != nil {
		return nil, err
	}
	return func(ctx context.Context, s *provision.Service) ([]string, error) {
		added, err := s.AddIntegrationSecret(ctx, provision.ByCLI, pos[0], *secret, *grace)
		return []string{added}, err
	}, nil
}

func integrationRevoke(name string, args []string) (action, error) {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	secretID := fs.Int64("secret", 0, "the id of the one secret to revoke (default: every secret of the integration)")
	pos, err := positionals(fs, args, "ID")
	if err != nil {
		return nil, err
	}
	if *secretID < 0 {
		return nil, flagErrorf(fs, "--secret %d is not an id", *secretID)
	}
	return func(ctx context.Context, s *provision.Service) ([]string, error) {
		return nil, s.RevokeIntegrationSecrets(ctx, provision.ByCLI, pos[0], *secretID)
	}, nil
}
