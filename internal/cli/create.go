package cli

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/lefia/edihub/internal/config"
	"github.com/lefia/edihub/internal/messagetype"
	"github.com/lefia/edihub/internal/notify"
	"github.com/lefia/edihub/internal/provision"
	"github.com/lefia/edihub/internal/signature"
)

// action is a parsed command, ready to run against the database.
type action func(context.Context, *provision.Service) ([]string, error)

// provisioning runs `<noun> <verb> ...`: create, or a verb that manages
// what exists (manage.go). It parses the arguments first, so that a bad
// command line fails without touching the database, then connects.
func provisioning(ctx context.Context, env Env, cfg config.Config, noun string, args []string) error {
	if len(args) == 0 {
		return usageErrorf(noun, "give a subcommand")
	}
	if isHelp(args[0]) {
		return &helpRequest{usage: usageOf(noun, nil)}
	}
	name := noun + " " + args[0]
	var act action
	var err error
	switch {
	case args[0] != "create":
		act, err = manageAction(noun, args[0], name, args[1:])
	case noun == "tenant":
		act, err = tenantCreate(name, args[1:])
	case noun == "env":
		act, err = envCreate(name, args[1:])
	case noun == "apikey":
		act, err = apikeyCreate(name, args[1:])
	case noun == "message-type":
		act, err = messageTypeCreate(name, args[1:])
	case noun == "integration":
		act, err = integrationCreate(name, args[1:])
	case noun == "user":
		act, err = userCreate(name, args[1:], env)
	case noun == "destination":
		act, err = destinationCreate(name, args[1:], cfg)
	case noun == "channel":
		act, err = channelCreate(name, args[1:], cfg)
	}
	if err != nil {
		return err
	}
	pool, err := connectMigrated(ctx, cfg)
	if err != nil {
		return err
	}
	defer pool.Close()
	lines, err := act(ctx, provision.New(pool))
	if err != nil {
		return err
	}
	return printLines(env.Stdout, lines...)
}

// positionals checks the count of positional arguments.
func positionals(fs *flag.FlagSet, args []string, names ...string) ([]string, error) {
	pos, err := parseFlags(fs, args)
	if err != nil {
		return nil, err
	}
	if len(pos) != len(names) {
		return nil, flagErrorf(fs, "want %d argument(s) (%s), got %d", len(names), strings.Join(names, ", "), len(pos))
	}
	return pos, nil
}

func tenantCreate(name string, args []string) (action, error) {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	display := fs.String("name", "", "display name (default: the slug)")
	pos, err := positionals(fs, args, "SLUG")
	if err != nil {
		return nil, err
	}
	return func(ctx context.Context, s *provision.Service) ([]string, error) {
		t, err := s.CreateTenant(ctx, pos[0], *display)
		return []string{strconv.FormatInt(t.ID, 10)}, err
	}, nil
}

func envCreate(name string, args []string) (action, error) {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	tenant := fs.String("tenant", "", "tenant slug")
	pos, err := positionals(fs, args, "NAME")
	if err != nil {
		return nil, err
	}
	if err := required(fs, "tenant"); err != nil {
		return nil, err
	}
	return func(ctx context.Context, s *provision.Service) ([]string, error) {
		e, err := s.CreateEnvironment(ctx, *tenant, pos[0])
		return []string{strconv.FormatInt(e.ID, 10)}, err
	}, nil
}

func apikeyCreate(name string, args []string) (action, error) {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	tenant := fs.String("tenant", "", "tenant slug")
	envName := fs.String("env", "", "environment name")
	keyName := fs.String("name", "", "what the key is for, shown in the keys list (e.g. \"SAP PI production\")")
	if _, err := positionals(fs, args); err != nil {
		return nil, err
	}
	if err := required(fs, "tenant", "env", "name"); err != nil {
		return nil, err
	}
	return func(ctx context.Context, s *provision.Service) ([]string, error) {
		key, err := s.CreateAPIKey(ctx, provision.ByCLI, *tenant, *envName, *keyName)
		return []string{key}, err
	}, nil
}

func messageTypeCreate(name string, args []string) (action, error) {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	tenant := fs.String("tenant", "", "tenant slug")
	fieldsText := fs.String("fields", "", "duplicate_key_fields as a JSON array of key paths (README.md, \"Key paths\")")
	windowText := fs.String("window-hours", "", "duplicate window in hours (default 168)")
	pos, err := positionals(fs, args, "CODE")
	if err != nil {
		return nil, err
	}
	if err := required(fs, "tenant"); err != nil {
		return nil, err
	}
	fields, err := messagetype.ParseFields(*fieldsText)
	if err != nil {
		return nil, flagErrorf(fs, "--fields: %v", err)
	}
	var window *int
	if *windowText != "" {
		n, err := strconv.Atoi(*windowText)
		if err != nil {
			return nil, flagErrorf(fs, "--window-hours %q is not a whole number", *windowText)
		}
		window = &n
	}
	spec := provision.MessageTypeSpec{Code: pos[0], Fields: fields, WindowHours: window}
	return func(ctx context.Context, s *provision.Service) ([]string, error) {
		mt, err := s.CreateMessageType(ctx, *tenant, spec)
		return []string{strconv.FormatInt(mt.ID, 10)}, err
	}, nil
}

func integrationCreate(name string, args []string) (action, error) {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	var spec provision.IntegrationSpec
	fs.StringVar(&spec.TenantSlug, "tenant", "", "tenant slug")
	fs.StringVar(&spec.EnvironmentSlug, "env", "", "environment name")
	fs.StringVar(&spec.MessageTypeCode, "message-type", "", "message type code")
	fs.StringVar(&spec.Scheme, "scheme", "", "signature scheme")
	fs.StringVar(&spec.Secret, "secret", "", "the sender's secret, or for standard-webhooks a whpk_ public key (default: generate a secret)")
	fs.DurationVar(&spec.Tolerance, "tolerance", signature.DefaultTolerance,
		"how far a standard-webhooks or stripe signing time may be from edihub's clock, whole seconds from 1s to 1h")
	if _, err := positionals(fs, args); err != nil {
		return nil, err
	}
	if err := required(fs, "tenant", "env", "message-type", "scheme"); err != nil {
		return nil, err
	}
	return func(ctx context.Context, s *provision.Service) ([]string, error) {
		id, secret, err := s.CreateIntegration(ctx, spec)
		if secret == "" {
			return []string{id}, err
		}
		return []string{id, secret}, err
	}, nil
}

func destinationCreate(name string, args []string, cfg config.Config) (action, error) {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	var spec provision.DestinationSpec
	fs.StringVar(&spec.TenantSlug, "tenant", "", "tenant slug")
	fs.StringVar(&spec.EnvironmentSlug, "env", "", "environment name")
	fs.StringVar(&spec.URL, "url", "", "where messages are POSTed")
	fs.Func("message-type", "a message type `CODE` the destination takes (repeatable; default: every type)", func(code string) error {
		spec.MessageTypeCodes = append(spec.MessageTypeCodes, code)
		return nil
	})
	fs.StringVar(&spec.Secret, "secret", "", "the whsec_ signing secret (default: generate one)")
	concurrency := fs.Int("concurrency", provision.DefaultMaxConcurrency, "deliveries to this destination that run at once, across every worker process")
	if _, err := positionals(fs, args); err != nil {
		return nil, err
	}
	if err := required(fs, "tenant", "env", "url"); err != nil {
		return nil, err
	}
	if *concurrency < 1 || *concurrency > 100 {
		return nil, flagErrorf(fs, "--concurrency must be from 1 to 100")
	}
	spec.MaxConcurrency = int32(*concurrency)
	return func(ctx context.Context, s *provision.Service) ([]string, error) {
		id, secret, err := s.CreateDestination(ctx, spec, cfg.Delivery.Egress)
		return []string{strconv.FormatInt(id, 10), secret}, err
	}, nil
}

// channelCreate is `channel create [--tenant SLUG] (--email ADDR | --slack
// URL | --webhook URL [--secret S]) [--name NAME]`: a channel of no tenant
// is global, as a user of none is.
func channelCreate(name string, args []string, cfg config.Config) (action, error) {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	var spec provision.ChannelSpec
	fs.StringVar(&spec.TenantSlug, "tenant", "", "tenant slug (default: a global channel, told of every alert)")
	targets := map[string]*string{
		notify.KindEmail:   fs.String("email", "", "send email to this address"),
		notify.KindSlack:   fs.String("slack", "", "post to this Slack-compatible incoming webhook URL"),
		notify.KindWebhook: fs.String("webhook", "", "post signed JSON to this URL"),
	}
	fs.StringVar(&spec.Secret, "secret", "", "the webhook's whsec_ signing secret (default: generate one)")
	fs.StringVar(&spec.Name, "name", "", "what admins call the channel (default: its address or URL)")
	if _, err := positionals(fs, args); err != nil {
		return nil, err
	}
	for kind, target := range targets {
		if *target == "" {
			continue
		}
		if spec.Kind != "" {
			return nil, flagErrorf(fs, "give one of --email, --slack and --webhook, not two")
		}
		spec.Kind, spec.Target = kind, *target
	}
	if spec.Kind == "" {
		return nil, flagErrorf(fs, "give one of --email, --slack and --webhook")
	}
	return func(ctx context.Context, s *provision.Service) ([]string, error) {
		id, secret, err := s.CreateChannel(ctx, spec, cfg.Delivery.Egress)
		if secret == "" {
			return []string{strconv.FormatInt(id, 10)}, err
		}
		return []string{strconv.FormatInt(id, 10), secret}, err
	}, nil
}

func userCreate(name string, args []string, env Env) (action, error) {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	var spec provision.UserSpec
	fs.StringVar(&spec.Email, "email", "", "login email")
	fs.StringVar(&spec.Role, "role", "", "admin or viewer")
	fs.StringVar(&spec.TenantSlug, "tenant", "", "tenant slug (default: a global user)")
	if _, err := positionals(fs, args); err != nil {
		return nil, err
	}
	if err := required(fs, "email", "role"); err != nil {
		return nil, err
	}
	pw, err := readPassword(env)
	if err != nil {
		return nil, err
	}
	spec.Password = pw
	return func(ctx context.Context, s *provision.Service) ([]string, error) {
		id, err := s.CreateUser(ctx, spec)
		return []string{strconv.FormatInt(id, 10)}, err
	}, nil
}

// readPassword takes EDIHUB_PASSWORD, else the first line of stdin, so that
// the password never appears in the process list or shell history.
func readPassword(env Env) (string, error) {
	if pw := env.Getenv("EDIHUB_PASSWORD"); pw != "" {
		return pw, nil
	}
	if env.Stdin == nil {
		return "", errors.New("no password: set EDIHUB_PASSWORD or pipe it on stdin")
	}
	line, err := bufio.NewReader(env.Stdin).ReadString('\n')
	if err != nil && !errors.Is(err, io.EOF) {
		return "", fmt.Errorf("read password from stdin: %w", err)
	}
	line = strings.TrimRight(line, "\r\n")
	if line == "" {
		return "", errors.New("no password: set EDIHUB_PASSWORD or pipe it on stdin")
	}
	return line, nil
}
