// Package provision creates what integrations and admins need before the
// first message arrives: tenants, environments, API keys, message types,
// integrations and users. The CLI is its main caller.
package provision

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"strings"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/lefia/edihub/internal/apperr"
	"github.com/lefia/edihub/internal/auditevent"
	"github.com/lefia/edihub/internal/auth"
	"github.com/lefia/edihub/internal/db"
)

// Service creates records, each with an audit event in the same transaction.
type Service struct {
	pool    *pgxpool.Pool
	changed func(tenantID int64)
}

// New returns a Service on pool.
func New(pool *pgxpool.Pool) *Service { return &Service{pool: pool} }

// AnnouncingChanges returns s telling changed, once each change has
// committed, of every tenant whose API keys or message types it changed,
// so that this process's caches of them forget that tenant at once; other
// processes hear of it from the database (migration 020's notifications).
func (s *Service) AnnouncingChanges(changed func(tenantID int64)) *Service {
	c := *s
	c.changed = changed
	return &c
}

// Announce tells s's listener, if it has one, that a committed change
// touched tenantID's API keys or message types.
func (s *Service) Announce(tenantID int64) {
	if s.changed != nil {
		s.changed(tenantID)
	}
}

var slugPattern = regexp.MustCompile(`^[a-z0-9][a-z0-9-]{0,62}$`)

func validateSlug(what, slug string) error {
	if !slugPattern.MatchString(slug) {
		return apperr.New(apperr.Invalid, "invalid-field",
			"%s %q is not valid: use 1 to 63 lowercase letters, digits and dashes, starting with a letter or digit", what, slug)
	}
	return nil
}

// tenant loads a tenant by slug with a clear error when it does not exist.
func tenant(ctx context.Context, q *db.Queries, slug string) (db.Tenant, error) {
	t, err := q.TenantGetBySlug(ctx, slug)
	if errors.Is(err, db.ErrNotFound) {
		return t, apperr.New(apperr.NotFound, "not-found", "tenant %q does not exist", slug)
	}
	if err != nil {
		return t, fmt.Errorf("load tenant %q: %w", slug, err)
	}
	return t, nil
}

// tenantEnvironment loads a tenant and one of its environments by slug.
func tenantEnvironment(ctx context.Context, q *db.Queries, tenantSlug, envSlug string) (db.Tenant, db.Environment, error) {
	t, err := tenant(ctx, q, tenantSlug)
	if err != nil {
		return t, db.Environment{}, err
	}
	e, err := environment(ctx, q, t, envSlug)
	return t, e, err
}

// environment loads a tenant's environment by slug.
func environment(ctx context.Context, q *db.Queries, t db.Tenant, slug string) (db.Environment, error) {
	e, err := q.EnvironmentGetBySlug(ctx, db.EnvironmentGetBySlugParams{TenantID: t.ID, Slug: slug})
	if errors.Is(err, db.ErrNotFound) {
		return e, apperr.New(apperr.NotFound, "not-found", "environment %q does not exist in tenant %q", slug, t.Slug)
	}
	if err != nil {
		return e, fmt.Errorf("load environment %q: %w", slug, err)
	}
	return e, nil
}

// messageType loads a tenant's message type by code.
func messageType(ctx context.Context, q *db.Queries, t db.Tenant, code string) (db.MessageType, error) {
	mt, err := q.MessageTypeGetByCode(ctx, db.MessageTypeGetByCodeParams{TenantID: t.ID, Code: code})
	if errors.Is(err, db.ErrNotFound) {
		return mt, apperr.New(apperr.NotFound, "not-found", "message type %q does not exist in tenant %q", code, t.Slug)
	}
	if err != nil {
		return mt, fmt.Errorf("load message type %q: %w", code, err)
	}
	return mt, nil
}

// audit records a change made through the CLI.
func audit(ctx context.Context, q *db.Queries, tenantID *int64, action string, details map[string]any) error {
	return auditevent.Record(ctx, q, auditevent.ActorCLI, tenantID, action, details)
}

// alreadyExists turns a unique violation into a clear conflict error.
func alreadyExists(err error, format string, args ...any) error {
	if _, ok := db.UniqueViolation(err); ok {
		return apperr.New(apperr.Conflict, "already-exists", format, args...)
	}
	return err
}

// Place is a tenant's environment, where destinations and API keys are
// created.
type Place struct {
	Tenant      string
	Environment string
}

// Places lists the environments within scope, where a user of that scope
// may create destinations and API keys.
func (s *Service) Places(ctx context.Context, scope auth.Scope) ([]Place, error) {
	rows, err := db.On(s.pool).EnvironmentListForAdmin(ctx, scope.TenantFilter())
	if err != nil {
		return nil, fmt.Errorf("list environments: %w", err)
	}
	out := make([]Place, len(rows))
	for i, r := range rows {
		out[i] = Place{Tenant: r.TenantSlug, Environment: r.EnvironmentSlug}
	}
	return out, nil
}

// checkRoom refuses to create one more of a tenant's things, counted by
// count, when it has max of them already, with the problem type
// "too-many-<things>". The tenant's row stays locked until the transaction
// ends, so that creations at once are counted one after the other.
func checkRoom(ctx context.Context, q *db.Queries, t db.Tenant, things string, max int, count func(context.Context, int64) (int64, error)) error {
	if err := q.TenantLock(ctx, t.ID); err != nil {
		return fmt.Errorf("lock tenant %s: %w", t.Slug, err)
	}
	n, err := count(ctx, t.ID)
	if err != nil {
		return fmt.Errorf("count %s of tenant %s: %w", things, t.Slug, err)
	}
	if n >= int64(max) {
		return apperr.New(apperr.Conflict, "too-many-"+strings.ReplaceAll(things, " ", "-"),
			"tenant %s has %d %s, the most a tenant may have", t.Slug, n, things)
	}
	return nil
}
