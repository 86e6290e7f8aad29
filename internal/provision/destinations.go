package provision

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strconv"
	"strings"
	"time"

	"github.com/lefia/edihub/internal/apperr"
	"github.com/lefia/edihub/internal/auditevent"
	"github.com/lefia/edihub/internal/auth"
	"github.com/lefia/edihub/internal/db"
	"github.com/lefia/edihub/internal/egress"
	"github.com/lefia/edihub/internal/signature"
)

// DefaultMaxConcurrency is how many deliveries to one destination run at
// once, across every worker process, unless the destination says otherwise:
// at 8 a destination that answers at once keeps up with a busy intake on
// the same two cores, at 4 it fell behind (docs/performance.md, "Delivery").
// A receiver that wants fewer requests at once gets its own limit.
const DefaultMaxConcurrency = 8

// MaxDestinationsPerTenant bounds a tenant's destinations. Each one is
// given every matching message, so a tenant with many multiplies the work
// of every message it sends; a hundred is far beyond the systems one
// tenant hands its documents on to.
const MaxDestinationsPerTenant = 100

// DestinationSpec describes a destination to create.
type DestinationSpec struct {
	TenantSlug      string
	EnvironmentSlug string
	URL             string
	// MessageTypeCodes limits the destination to these types; empty takes
	// every type.
	MessageTypeCodes []string
	// Secret is the whsec_ signing secret; empty generates one.
	Secret string
	// MaxConcurrency is how many deliveries to the destination run at once,
	// across every worker process, from 1 to 100.
	MaxConcurrency int32
	// Actor is who creates the destination, for the audit trail (e.g.
	// "user:7" for an admin in the browser); empty means the CLI.
	Actor string
}

// CreateDestination creates a destination and returns its id and signing
// secret. Its URL must be allowed by policy now (the delivery workers check
// every connection again, against the address they connect to).
func (s *Service) CreateDestination(ctx context.Context, spec DestinationSpec, policy egress.Policy) (id int64, secret string, err error) {
	url, err := validateDestination(ctx, spec.URL, spec.MaxConcurrency, policy)
	if err != nil {
		return 0, "", err
	}
	if secret, err = signingSecret(spec.Secret); err != nil {
		return 0, "", err
	}
	err = db.WithTx(ctx, s.pool, func(q *db.Queries) error {
		t, e, err := tenantEnvironment(ctx, q, spec.TenantSlug, spec.EnvironmentSlug)
		if err != nil {
			return err
		}
		if err := checkRoom(ctx, q, t, "destinations", MaxDestinationsPerTenant, q.DestinationCountOfTenant); err != nil {
			return err
		}
		typeIDs, err := messageTypeIDs(ctx, q, t, spec.MessageTypeCodes)
		if err != nil {
			return err
		}
		id, err = q.DestinationInsert(ctx, db.DestinationInsertParams{
			TenantID: t.ID, EnvironmentID: e.ID, Url: url, MessageTypeIds: typeIDs, Secret: secret,
			MaxConcurrency: spec.MaxConcurrency,
		})
		if err != nil {
			return fmt.Errorf("store destination: %w", err)
		}
		who := spec.Actor
		if who == "" {
			who = auditevent.ActorCLI
		}
		return auditevent.Record(ctx, q, who, &t.ID, auditevent.DestinationCreated, map[string]any{
			"destination_id": strconv.FormatInt(id, 10), "environment": e.Slug, "url": url,
			"message_types": spec.MessageTypeCodes,
		})
	})
	if err != nil {
		return 0, "", err
	}
	return id, secret, nil
}

// validateDestination checks what a destination is given to send to: a URL
// policy allows now (the delivery workers check every connection again,
// against the address they connect to), and a concurrency limit. It returns
// the URL as it is kept (egress.NormalizeURL).
func validateDestination(ctx context.Context, raw string, maxConcurrency int32, policy egress.Policy) (string, error) {
	url, err := policy.CheckURL(ctx, net.DefaultResolver, raw)
	if err != nil {
		return "", invalidURL("destination", raw, err)
	}
	if maxConcurrency < 1 || maxConcurrency > 100 {
		return "", apperr.New(apperr.Invalid, "invalid-field", "the concurrency limit must be from 1 to 100, not %d", maxConcurrency)
	}
	return url, nil
}

// invalidURL says why the URL raw of what names cannot be used. The URL is
// quoted with its hidden characters escaped, and only its start when long.
func invalidURL(what, raw string, err error) error {
	const shown = 200
	if len(raw) > shown {
		raw = strings.ToValidUTF8(raw[:shown], "") + "…"
	}
	return apperr.New(apperr.Invalid, "invalid-field", "%s URL %+q: %v", what, raw, err)
}

// messageTypeIDs looks up a tenant's message types by code.
func messageTypeIDs(ctx context.Context, q *db.Queries, t db.Tenant, codes []string) ([]int64, error) {
	ids := make([]int64, 0, len(codes))
	for _, code := range codes {
		mt, err := messageType(ctx, q, t, code)
		if err != nil {
			return nil, err
		}
		ids = append(ids, mt.ID)
	}
	return ids, nil
}

// signingSecret is the Standard Webhooks secret edihub signs with for a
// destination or a webhook channel: given, once it is one edihub can sign
// with, else a new one.
func signingSecret(given string) (string, error) {
	if given == "" {
		return signature.GenerateSecret(signature.StandardWebhooks)
	}
	return given, validateSigningSecret(given)
}

// validateSigningSecret accepts a Standard Webhooks secret edihub can sign
// with: "whsec_" and the base64 of an HMAC key. A receiver's public key
// (whpk_) or a bare key would verify, but could not sign.
func validateSigningSecret(secret string) error {
	if !strings.HasPrefix(secret, "whsec_") {
		return apperr.New(apperr.Invalid, "invalid-field", "the signing secret must start with whsec_ (a Standard Webhooks HMAC secret)")
	}
	if err := signature.ValidateSecret(signature.StandardWebhooks, secret); err != nil {
		return apperr.New(apperr.Invalid, "invalid-field", "%v", err)
	}
	return nil
}

// Destination is a destination as the admin pages show it; its secret is
// shown once, when it is created, and never read back.
type Destination struct {
	ID           int64
	Tenant       string
	Environment  string
	URL          string
	MessageTypes []string // codes; empty: every type
	Paused       bool
	// AutoPaused is when DESTINATION_AUTO_PAUSE_AFTER paused it, nil when
	// it is not paused so (an admin paused it, or it runs).
	AutoPaused     *time.Time
	MaxConcurrency int32
	Created        time.Time
	Updated        time.Time
}

// Destinations lists the destinations within scope.
func (s *Service) Destinations(ctx context.Context, scope auth.Scope) ([]Destination, error) {
	return s.destinations(ctx, scope, nil)
}

// Destination loads a destination within scope; one outside it is not
// found, as one that does not exist.
func (s *Service) Destination(ctx context.Context, scope auth.Scope, id int64) (Destination, error) {
	found, err := s.destinations(ctx, scope, &id)
	if err != nil {
		return Destination{}, err
	}
	if len(found) == 0 {
		return Destination{}, apperr.New(apperr.NotFound, "not-found", "destination %d does not exist", id)
	}
	return found[0], nil
}

// destinations lists the destinations within scope, or the one with id.
func (s *Service) destinations(ctx context.Context, scope auth.Scope, id *int64) ([]Destination, error) {
	rows, err := db.On(s.pool).DestinationListForAdmin(ctx, db.DestinationListForAdminParams{ScopeTenantID: scope.TenantFilter(), ID: id})
	if err != nil {
		return nil, fmt.Errorf("list destinations: %w", err)
	}
	out := make([]Destination, len(rows))
	for i, r := range rows {
		out[i] = Destination{
			ID: r.ID, Tenant: r.TenantSlug, Environment: r.EnvironmentSlug, URL: r.Url, MessageTypes: r.MessageTypes,
			Paused: r.Paused, AutoPaused: r.AutoPausedAt, MaxConcurrency: r.MaxConcurrency, Created: r.CreatedAt.UTC(),
			Updated: r.UpdatedAt.UTC(),
		}
	}
	return out, nil
}

// DestinationChange is what an admin may change of a destination: where it
// sends, what it takes and how many deliveries it takes at once. Its tenant,
// environment and secret stay.
type DestinationChange struct {
	URL              string
	MessageTypeCodes []string // empty: every type
	MaxConcurrency   int32
	Actor            string // who changes it, for the audit trail
}

// UpdateDestination changes a destination within scope. The URL is checked
// against policy as at creation.
func (s *Service) UpdateDestination(ctx context.Context, scope auth.Scope, id int64, change DestinationChange, policy egress.Policy) error {
	url, err := validateDestination(ctx, change.URL, change.MaxConcurrency, policy)
	if err != nil {
		return err
	}
	current, err := s.Destination(ctx, scope, id)
	if err != nil {
		return err
	}
	return db.WithTx(ctx, s.pool, func(q *db.Queries) error {
		t, err := tenant(ctx, q, current.Tenant)
		if err != nil {
			return err
		}
		typeIDs, err := messageTypeIDs(ctx, q, t, change.MessageTypeCodes)
		if err != nil {
			return err
		}
		_, err = q.DestinationUpdate(ctx, db.DestinationUpdateParams{
			ID: id, ScopeTenantID: scope.TenantFilter(), Url: url, MessageTypeIds: typeIDs, MaxConcurrency: change.MaxConcurrency,
		})
		if errors.Is(err, db.ErrNotFound) {
			return apperr.New(apperr.NotFound, "not-found", "destination %d does not exist", id)
		}
		if err != nil {
			return fmt.Errorf("update destination %d: %w", id, err)
		}
		return auditevent.Record(ctx, q, change.Actor, &t.ID, auditevent.DestinationUpdated, map[string]any{
			"destination_id": strconv.FormatInt(id, 10), "url": url, "message_types": change.MessageTypeCodes,
			"max_concurrency": change.MaxConcurrency,
		})
	})
}
