package auth

import (
	"context"
	"fmt"

	"github.com/lefia/edihub/internal/db"
)

// Tenants lists the slugs of the tenants scope may see.
func (s *Service) Tenants(ctx context.Context, scope Scope) ([]string, error) {
	rows, err := db.On(s.pool).TenantList(ctx, scope.TenantFilter())
	if err != nil {
		return nil, fmt.Errorf("list tenants: %w", err)
	}
	slugs := make([]string, len(rows))
	for i, t := range rows {
		slugs[i] = t.Slug
	}
	return slugs, nil
}
