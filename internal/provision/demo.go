package provision

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"net"

	"github.com/lefia/edihub/internal/apikey"
	"github.com/lefia/edihub/internal/auth"
	"github.com/lefia/edihub/internal/db"
	"github.com/lefia/edihub/internal/egress"
	"github.com/lefia/edihub/internal/messagetype"
	"github.com/lefia/edihub/internal/password"
	"github.com/lefia/edihub/internal/signature"
)

// The demo's fixed names, printed by `edihub demo` and used in the README.
const (
	DemoTenant      = "acme"
	DemoEnvironment = "production"
	DemoAdminEmail  = "admin@acme.example"
)

// demoTypes are the demo's message types with the business keys the README
// explains: the document number, which a repeat output keeps while it gets
// a new DOCNUM, and for orders the IDoc message type (an ORDCHG is not a
// duplicate of an ORDERS). The IDoc keys are the editor's presets.
var demoTypes = []MessageTypeSpec{
	{Code: "ORDERS05", Fields: messagetype.IDocORDERS05Paths},
	{Code: "INVOIC02", Fields: messagetype.IDocINVOIC02Paths},
	{Code: "SHOP_ORDER", Fields: []string{"id"}},
	// The X12 and EDIFACT samples of docs/samples, keyed by their
	// document numbers: the purchase order's BEG03, the invoice's BIG02,
	// the EDIFACT document's BGM02.
	{Code: "850", Fields: []string{"BEG.0.BEG03"}},
	{Code: "810", Fields: []string{"BIG.0.BIG02"}},
	{Code: "ORDERS", Fields: []string{"BGM.0.BGM02"}},
	{Code: "INVOIC", Fields: []string{"BGM.0.BGM02"}},
}

// DemoRequest is what the demo is loaded with.
type DemoRequest struct {
	// ReceiverURL, when given, is where the production environment
	// delivers to.
	ReceiverURL string
	// Keep holds the secrets an earlier run printed, kept while they work.
	Keep DemoSecrets
	// ResetPassword lets the demo give an existing admin whose password is
	// not Keep's a new one; without it that admin's login stays as it is,
	// since it may be another run's.
	ResetPassword bool
}

// Demo is what a user needs to try edihub right away.
type Demo struct {
	Tenant      string
	Environment string
	AdminEmail  string
	// AdminID is the demo admin's user id, for `edihub user reset-password`.
	AdminID int64
	DemoSecrets
	// What became of the secrets given to keep: an API key is kept or new
	// (older keys stay valid); the password is kept, new for a new admin,
	// replaced, when the admin's earlier password stops working, or
	// unknown, when an admin whose password was not given keeps it.
	APIKeyStatus, AdminPasswordStatus SecretStatus
	// DestinationID is the demo's destination, when a receiver URL was given,
	// and DestinationSecret the secret its deliveries are signed with, for
	// the receiver to check them.
	DestinationID     int64
	DestinationSecret string
	// OtherDestinations are the production environment's destinations
	// other than the receiver's, left by earlier runs: their deliveries go
	// where this run starts nothing.
	OtherDestinations []Destination
	// Found is what the database held before the demo was loaded.
	Found db.DemoFoundRow
	// WebhookIntegration and WebhookSecret are the demo's integration for
	// webhooks signed as GitHub signs them (SHOP_ORDER messages of the
	// production environment), and its HMAC secret.
	WebhookIntegration, WebhookSecret string
}

// demoWebhookType is the message type of the demo's webhook integration.
const demoWebhookType = "SHOP_ORDER"

// DemoSecrets are the demo's API key and admin password, which an earlier
// run printed and a new run may keep.
type DemoSecrets struct {
	APIKey        string
	AdminPassword string
}

// SecretStatus says whether Demo kept a secret it was given.
type SecretStatus string

const (
	SecretKept     SecretStatus = "kept"
	SecretNew      SecretStatus = "new"
	SecretReplaced SecretStatus = "replaced"
	SecretUnknown  SecretStatus = "unknown"
)

// Demo creates the demo tenant, its environments, message types and a global
// admin, leaving whatever already exists in place, so running it again is
// safe. Stored secrets are hashes and cannot be shown twice, so the caller
// passes the secrets an earlier run printed: each one that still works (the
// key is live in the demo's environment, the password is the admin's) is
// kept, so that a login written down earlier keeps working; any other key
// is replaced by a new one, and the password only with ResetPassword. With
// a ReceiverURL (allowed by policy), the production environment also gets
// a destination there, created once.
func (s *Service) Demo(ctx context.Context, req DemoRequest, policy egress.Policy) (Demo, error) {
	demo := Demo{Tenant: DemoTenant, Environment: DemoEnvironment, AdminEmail: DemoAdminEmail}
	err := db.WithTx(ctx, s.pool, func(q *db.Queries) error {
		var err error
		if demo.Found, err = q.DemoFound(ctx); err != nil {
			return fmt.Errorf("count what the database holds: %w", err)
		}
		t, err := ensureTenant(ctx, q, DemoTenant, "ACME Corporation")
		if err != nil {
			return err
		}
		var prod db.Environment
		for _, slug := range []string{DemoEnvironment, "sandbox"} {
			e, err := ensureEnvironment(ctx, q, t, slug)
			if err != nil {
				return err
			}
			if slug == DemoEnvironment {
				prod = e
			}
		}
		for _, spec := range demoTypes {
			if err := ensureMessageType(ctx, q, t, spec); err != nil {
				return err
			}
		}
		demo.APIKey, demo.APIKeyStatus, err = ensureDemoAPIKey(ctx, q, prod, req.Keep.APIKey)
		if err != nil {
			return err
		}
		demo.WebhookIntegration, demo.WebhookSecret, err = ensureWebhookIntegration(ctx, q, t, prod)
		if err != nil {
			return err
		}
		demo.AdminID, demo.AdminPassword, demo.AdminPasswordStatus, err = ensureAdmin(ctx, q, req.Keep.AdminPassword, req.ResetPassword)
		if err != nil {
			return err
		}
		if req.ReceiverURL == "" {
			return nil
		}
		demo.DestinationID, demo.DestinationSecret, err = ensureDestination(ctx, q, t, prod, req.ReceiverURL, policy)
		if err != nil {
			return err
		}
		demo.OtherDestinations, err = otherDestinations(ctx, q, t, prod, demo.DestinationID)
		return err
	})
	return demo, err
}

// ensureWebhookIntegration returns the demo's GitHub-signed integration of
// e and its newest current secret, creating the integration unless one
// with a current secret exists. An HMAC secret is kept to verify
// signatures, so an earlier run's can be shown again.
func ensureWebhookIntegration(ctx context.Context, q *db.Queries, t db.Tenant, e db.Environment) (string, string, error) {
	list, err := q.IntegrationList(ctx, &t.ID)
	if err != nil {
		return "", "", fmt.Errorf("list the demo's integrations: %w", err)
	}
	for _, in := range list {
		if in.EnvironmentSlug != e.Slug || in.MessageTypeCode != demoWebhookType || in.Scheme != string(signature.GitHub) {
			continue
		}
		secrets, err := q.IntegrationSecretsCurrent(ctx, in.ID)
		if err != nil {
			return "", "", fmt.Errorf("load the demo integration's secret: %w", err)
		}
		if len(secrets) > 0 {
			return in.ID.String(), secrets[0], nil
		}
	}
	mt, err := messageType(ctx, q, t, demoWebhookType)
	if err != nil {
		return "", "", err
	}
	secret, err := signature.GenerateSecret(signature.GitHub)
	if err != nil {
		return "", "", err
	}
	id, err := insertIntegration(ctx, q, t, e, mt, signature.GitHub, secret, signature.DefaultTolerance)
	return id, secret, err
}

// otherDestinations lists the destinations of t's environment e but the
// one with id keep.
func otherDestinations(ctx context.Context, q *db.Queries, t db.Tenant, e db.Environment, keep int64) ([]Destination, error) {
	rows, err := q.DestinationListForAdmin(ctx, db.DestinationListForAdminParams{ScopeTenantID: &t.ID})
	if err != nil {
		return nil, fmt.Errorf("list the demo's destinations: %w", err)
	}
	var others []Destination
	for _, r := range rows {
		if r.EnvironmentSlug == e.Slug && r.ID != keep {
			others = append(others, Destination{ID: r.ID, Tenant: r.TenantSlug, Environment: r.EnvironmentSlug, URL: r.Url})
		}
	}
	return others, nil
}

// ensureDemoAPIKey returns kept when it is a live key of e; otherwise a new
// key of e. A revoked key stays revoked.
func ensureDemoAPIKey(ctx context.Context, q *db.Queries, e db.Environment, kept string) (string, SecretStatus, error) {
	if kept != "" {
		hash := apikey.Hash(kept)
		k, err := q.APIKeyGetByHash(ctx, hash[:])
		if err == nil && k.EnvironmentID == e.ID {
			return kept, SecretKept, nil
		}
		if err != nil && !errors.Is(err, db.ErrNotFound) {
			return "", "", fmt.Errorf("look up the demo api key: %w", err)
		}
	}
	key, err := apikey.Generate()
	if err != nil {
		return "", "", err
	}
	if _, err := q.APIKeyInsert(ctx, db.APIKeyInsertParams{
		TenantID: e.TenantID, EnvironmentID: e.ID, KeyHash: key.Hash[:], KeyPrefix: key.Prefix, Name: "demo sender",
	}); err != nil {
		return "", "", fmt.Errorf("store demo api key: %w", err)
	}
	return key.Secret, SecretNew, nil
}

// ensureDestination creates a destination for every type at url unless
// the environment has one there, and returns it with its signing secret.
func ensureDestination(ctx context.Context, q *db.Queries, t db.Tenant, e db.Environment, raw string, policy egress.Policy) (int64, string, error) {
	url, err := egress.NormalizeURL(raw)
	if err != nil {
		return 0, "", invalidURL("demo receiver", raw, err)
	}
	found, err := q.DestinationFindByURL(ctx, db.DestinationFindByURLParams{TenantID: t.ID, EnvironmentID: e.ID, Url: url})
	if err == nil || !errors.Is(err, db.ErrNotFound) {
		return found.ID, found.Secret, err
	}
	if _, err := policy.CheckURL(ctx, net.DefaultResolver, url); err != nil {
		return 0, "", invalidURL("demo receiver", raw, err)
	}
	secret, err := signature.GenerateSecret(signature.StandardWebhooks)
	if err != nil {
		return 0, "", err
	}
	id, err := q.DestinationInsert(ctx, db.DestinationInsertParams{
		TenantID: t.ID, EnvironmentID: e.ID, Url: url, MessageTypeIds: []int64{}, Secret: secret, MaxConcurrency: DefaultMaxConcurrency,
	})
	if err != nil {
		return 0, "", fmt.Errorf("create demo destination: %w", err)
	}
	return id, secret, nil
}

func ensureTenant(ctx context.Context, q *db.Queries, slug, name string) (db.Tenant, error) {
	t, err := q.TenantGetBySlug(ctx, slug)
	if errors.Is(err, db.ErrNotFound) {
		t, err = q.TenantInsert(ctx, db.TenantInsertParams{Slug: slug, Name: name})
	}
	if err != nil {
		return t, fmt.Errorf("ensure tenant %q: %w", slug, err)
	}
	return t, nil
}

func ensureEnvironment(ctx context.Context, q *db.Queries, t db.Tenant, slug string) (db.Environment, error) {
	e, err := q.EnvironmentGetBySlug(ctx, db.EnvironmentGetBySlugParams{TenantID: t.ID, Slug: slug})
	if errors.Is(err, db.ErrNotFound) {
		e, err = q.EnvironmentInsert(ctx, db.EnvironmentInsertParams{TenantID: t.ID, Slug: slug})
	}
	if err != nil {
		return e, fmt.Errorf("ensure environment %q: %w", slug, err)
	}
	return e, nil
}

// ensureMessageType creates a demo type unless one with its code exists; an
// existing type keeps whatever an admin has configured since.
func ensureMessageType(ctx context.Context, q *db.Queries, t db.Tenant, spec MessageTypeSpec) error {
	_, err := q.MessageTypeGetByCode(ctx, db.MessageTypeGetByCodeParams{TenantID: t.ID, Code: spec.Code})
	if errors.Is(err, db.ErrNotFound) {
		_, err = insertMessageType(ctx, q, t, spec)
	}
	if err != nil {
		return fmt.Errorf("ensure message type %q: %w", spec.Code, err)
	}
	return nil
}

// ensureAdmin returns the demo admin's id and kept when it is the admin's
// password. Otherwise it creates the admin with a new password, or with
// reset gives the existing admin a new one, and returns it; without reset
// an existing admin keeps a password nobody gave (SecretUnknown).
func ensureAdmin(ctx context.Context, q *db.Queries, kept string, reset bool) (int64, string, SecretStatus, error) {
	u, err := q.UserGetByEmail(ctx, DemoAdminEmail)
	if err != nil && !errors.Is(err, db.ErrNotFound) {
		return 0, "", "", fmt.Errorf("load demo admin: %w", err)
	}
	exists := err == nil
	switch {
	case exists && kept != "" && password.Check(kept, u.PasswordHash) == nil:
		return u.ID, kept, SecretKept, nil
	case exists && !reset:
		return u.ID, "", SecretUnknown, nil
	}
	pw, err := randomPassword()
	if err != nil {
		return 0, "", "", err
	}
	if exists {
		return u.ID, pw, SecretReplaced, setPassword(ctx, q, u.ID, pw)
	}
	hash, err := hashPassword(pw)
	if err != nil {
		return 0, "", "", err
	}
	id, err := q.UserInsert(ctx, db.UserInsertParams{Email: DemoAdminEmail, PasswordHash: hash, Role: auth.RoleAdmin})
	if err != nil {
		return 0, "", "", fmt.Errorf("create demo admin: %w", err)
	}
	return id, pw, SecretNew, nil
}

// randomPassword returns 24 characters from 144 random bits.
func randomPassword() (string, error) {
	var raw [18]byte
	if _, err := rand.Read(raw[:]); err != nil {
		return "", fmt.Errorf("generate password: %w", err)
	}
	return base64.RawURLEncoding.EncodeToString(raw[:]), nil
}
