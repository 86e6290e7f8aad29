package auth

import (
	"context"
	"fmt"

	"github.com/lefia/edihub/internal/db"
)

// Listed is a user as the users page lists them.
type Listed struct {
	Email  string
	Role   string
	Tenant string // "" for a global user
}

// Users lists the users scope may see: a tenant's own users, or everyone.
func (s *Service) Users(ctx context.Context, scope Scope) ([]Listed, error) {
	rows, err := db.New(s.pool).UserList(ctx, scope.TenantFilter())
	if err != nil {
		return nil, fmt.Errorf("list users: %w", err)
	}
	users := make([]Listed, len(rows))
	for i, r := range rows {
		users[i] = Listed{Email: r.Email, Role: r.Role}
		if r.TenantSlug != nil {
			users[i].Tenant = *r.TenantSlug
		}
	}
	return users, nil
}

// Tenants lists the slugs of the tenants scope may see.
func (s *Service) Tenants(ctx context.Context, scope Scope) ([]string, error) {
	rows, err := db.New(s.pool).TenantList(ctx, scope.TenantFilter())
	if err != nil {
		return nil, fmt.Errorf("list tenants: %w", err)
	}
	slugs := make([]string, len(rows))
	for i, t := range rows {
		slugs[i] = t.Slug
	}
	return slugs, nil
}
