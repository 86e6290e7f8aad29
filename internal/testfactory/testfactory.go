// Package testfactory creates the records tests start from: tenants,
// environments, message types, API keys, integrations, destinations and
// users, each with defaults, so that a test names only what it cares about.
// Records are created through provision, as the CLI creates them, audit
// events included. Tests only import it.
package testfactory

import (
	"cmp"
	"context"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"

	"github.com/lefia/edihub/internal/auth"
	"github.com/lefia/edihub/internal/db"
	"github.com/lefia/edihub/internal/egress"
	"github.com/lefia/edihub/internal/provision"
	"github.com/lefia/edihub/internal/signature"
)

// Defaults of the records: tenant acme with its production environment.
const (
	TenantSlug      = "acme"
	EnvironmentSlug = "production"
	MessageTypeCode = "ORDERS05"
	// Password is every test user's password.
	Password = "correct horse battery staple"
)

// TenantOpts are a tenant's settings; empty fields take the defaults.
type TenantOpts struct {
	Slug string // default TenantSlug
	Name string // default the slug
}

// Tenant creates a tenant.
func Tenant(tb testing.TB, pool *pgxpool.Pool, opts *TenantOpts) db.Tenant {
	tb.Helper()
	if opts == nil {
		opts = &TenantOpts{}
	}
	t, err := provision.New(pool).CreateTenant(context.Background(), or(opts.Slug, TenantSlug), opts.Name)
	require.NoError(tb, err)
	return t
}

// EnvironmentOpts are an environment's settings; empty fields take the
// defaults.
type EnvironmentOpts struct {
	Tenant string // default TenantSlug
	Slug   string // default EnvironmentSlug
}

// Environment creates an environment in an existing tenant.
func Environment(tb testing.TB, pool *pgxpool.Pool, opts *EnvironmentOpts) db.Environment {
	tb.Helper()
	if opts == nil {
		opts = &EnvironmentOpts{}
	}
	e, err := provision.New(pool).CreateEnvironment(context.Background(),
		or(opts.Tenant, TenantSlug), or(opts.Slug, EnvironmentSlug))
	require.NoError(tb, err)
	return e
}

// TenantWithEnvironment creates a tenant with slug and its production
// environment, the smallest setup a message can be stored in.
func TenantWithEnvironment(tb testing.TB, pool *pgxpool.Pool, slug string) (db.Tenant, db.Environment) {
	tb.Helper()
	t := Tenant(tb, pool, &TenantOpts{Slug: slug})
	return t, Environment(tb, pool, &EnvironmentOpts{Tenant: t.Slug})
}

// MessageTypeOpts are a message type's settings; empty fields take the
// defaults.
type MessageTypeOpts struct {
	Tenant      string   // default TenantSlug
	Code        string   // default MessageTypeCode
	Fields      []string // duplicate_key_fields; default none (the docnum decides)
	WindowHours *int     // default the 168 hours of the schema
}

// MessageType creates a message type in an existing tenant.
func MessageType(tb testing.TB, pool *pgxpool.Pool, opts *MessageTypeOpts) db.MessageType {
	tb.Helper()
	if opts == nil {
		opts = &MessageTypeOpts{}
	}
	mt, err := provision.New(pool).CreateMessageType(context.Background(), or(opts.Tenant, TenantSlug),
		provision.MessageTypeSpec{Code: or(opts.Code, MessageTypeCode), Fields: opts.Fields, WindowHours: opts.WindowHours})
	require.NoError(tb, err)
	return mt
}

// APIKeyOpts name the environment of an API key; empty fields take the
// defaults.
type APIKeyOpts struct {
	Tenant      string // default TenantSlug
	Environment string // default EnvironmentSlug
	Name        string // default "test sender"
}

// APIKey creates an API key in an existing environment and returns its
// secret.
func APIKey(tb testing.TB, pool *pgxpool.Pool, opts *APIKeyOpts) string {
	tb.Helper()
	if opts == nil {
		opts = &APIKeyOpts{}
	}
	key, err := provision.New(pool).CreateAPIKey(context.Background(), provision.ByCLI,
		or(opts.Tenant, TenantSlug), or(opts.Environment, EnvironmentSlug), or(opts.Name, "test sender"))
	require.NoError(tb, err)
	return key
}

// IntegrationOpts are an integration's settings; empty fields take the
// defaults.
type IntegrationOpts struct {
	Tenant      string // default TenantSlug
	Environment string // default EnvironmentSlug
	MessageType string // default MessageTypeCode
	Scheme      string // required: standard-webhooks, github, stripe, shopify or bearer
	Secret      string // default a generated one
	// Tolerance is the signature timestamp tolerance, default
	// signature.DefaultTolerance.
	Tolerance time.Duration
}

// Integration creates an integration and returns its id and secret.
func Integration(tb testing.TB, pool *pgxpool.Pool, opts IntegrationOpts) (id, secret string) {
	tb.Helper()
	id, secret, err := provision.New(pool).CreateIntegration(context.Background(), provision.IntegrationSpec{
		TenantSlug: or(opts.Tenant, TenantSlug), EnvironmentSlug: or(opts.Environment, EnvironmentSlug),
		MessageTypeCode: or(opts.MessageType, MessageTypeCode), Scheme: opts.Scheme, Secret: opts.Secret,
		Tolerance: cmp.Or(opts.Tolerance, signature.DefaultTolerance),
	})
	require.NoError(tb, err)
	return id, secret
}

// DestinationOpts are a destination's settings; empty fields take the
// defaults.
type DestinationOpts struct {
	Tenant       string   // default TenantSlug
	Environment  string   // default EnvironmentSlug
	URL          string   // required; loopback addresses are allowed here
	MessageTypes []string // default none: every type
	Secret       string   // default a generated one
	Concurrency  int32    // default 4
}

// Destination creates a destination and returns its id and secret. Tests
// deliver to local receivers, so loopback is allowed, as
// DESTINATION_ALLOWED_CIDRS=127.0.0.0/8 allows it.
func Destination(tb testing.TB, pool *pgxpool.Pool, opts DestinationOpts) (id int64, secret string) {
	tb.Helper()
	loopback, err := egress.ParsePolicy("127.0.0.0/8,::1/128")
	require.NoError(tb, err)
	if opts.Concurrency == 0 {
		opts.Concurrency = provision.DefaultMaxConcurrency
	}
	id, secret, err = provision.New(pool).CreateDestination(context.Background(), provision.DestinationSpec{
		TenantSlug: or(opts.Tenant, TenantSlug), EnvironmentSlug: or(opts.Environment, EnvironmentSlug),
		URL: opts.URL, MessageTypeCodes: opts.MessageTypes, Secret: opts.Secret, MaxConcurrency: opts.Concurrency,
	}, loopback)
	require.NoError(tb, err)
	return id, secret
}

// UserOpts are an admin user's settings; empty fields take the defaults.
type UserOpts struct {
	Email  string // default admin@acme.example
	Role   string // default auth.RoleAdmin
	Tenant string // default none: a global user
}

// User creates an admin user with Password and returns the user as a
// signed-in request sees it.
func User(tb testing.TB, pool *pgxpool.Pool, opts *UserOpts) auth.User {
	tb.Helper()
	if opts == nil {
		opts = &UserOpts{}
	}
	ctx := context.Background()
	id, err := provision.New(pool).CreateUser(ctx, provision.UserSpec{
		Email: or(opts.Email, "admin@acme.example"), Role: or(opts.Role, auth.RoleAdmin),
		TenantSlug: opts.Tenant, Password: Password,
	})
	require.NoError(tb, err)
	u, err := auth.New(pool).SessionUser(ctx, id, 0)
	require.NoError(tb, err)
	return u
}

func or(value, fallback string) string {
	if value == "" {
		return fallback
	}
	return value
}
