package provision

import (
	"context"
	"unicode/utf8"

	"github.com/lefia/edihub/internal/apperr"
	"github.com/lefia/edihub/internal/auditevent"
	"github.com/lefia/edihub/internal/db"
)

// CreateTenant creates a tenant; name defaults to the slug.
func (s *Service) CreateTenant(ctx context.Context, slug, name string) (db.Tenant, error) {
	var t db.Tenant
	if err := validateSlug("tenant slug", slug); err != nil {
		return t, err
	}
	if name == "" {
		name = slug
	}
	if utf8.RuneCountInString(name) > 200 {
		return t, apperr.New(apperr.Invalid, "invalid-field", "tenant name is too long: use at most 200 characters")
	}
	err := db.WithTx(ctx, s.pool, func(q *db.Queries) error {
		var err error
		t, err = q.TenantInsert(ctx, db.TenantInsertParams{Slug: slug, Name: name})
		if err != nil {
			return alreadyExists(err, "tenant %q already exists", slug)
		}
		return audit(ctx, q, &t.ID, auditevent.TenantCreated, map[string]any{"slug": slug, "name": name})
	})
	return t, err
}

// CreateEnvironment creates an environment in a tenant.
func (s *Service) CreateEnvironment(ctx context.Context, tenantSlug, slug string) (db.Environment, error) {
	var e db.Environment
	if err := validateSlug("environment name", slug); err != nil {
		return e, err
	}
	err := db.WithTx(ctx, s.pool, func(q *db.Queries) error {
		t, err := tenant(ctx, q, tenantSlug)
		if err != nil {
			return err
		}
		e, err = q.EnvironmentInsert(ctx, db.EnvironmentInsertParams{TenantID: t.ID, Slug: slug})
		if err != nil {
			return alreadyExists(err, "environment %q already exists in tenant %q", slug, tenantSlug)
		}
		return audit(ctx, q, &t.ID, auditevent.EnvironmentCreated, map[string]any{"environment": slug})
	})
	return e, err
}
