package provision

import (
	"context"
	"fmt"

	"github.com/lefia/edihub/internal/auth"
	"github.com/lefia/edihub/internal/db"
	"github.com/lefia/edihub/internal/messagetype"
)

// ScopeOf is the scope of the tenant called slug, so that what the CLI
// lists for a tenant is what the tenant's admins see; "" is every tenant.
func (s *Service) ScopeOf(ctx context.Context, slug string) (auth.Scope, error) {
	if slug == "" {
		return auth.GlobalScope(), nil
	}
	t, err := tenant(ctx, db.On(s.pool), slug)
	if err != nil {
		return auth.Scope{}, err
	}
	return auth.TenantScope(t.ID), nil
}

// Tenants lists the tenants within scope, by slug.
func (s *Service) Tenants(ctx context.Context, scope auth.Scope) ([]db.Tenant, error) {
	rows, err := db.On(s.pool).TenantList(ctx, scope.TenantFilter())
	if err != nil {
		return nil, fmt.Errorf("list tenants: %w", err)
	}
	return rows, nil
}

// MessageType is a message type as a list shows it.
type MessageType struct {
	Tenant      string
	Code        string
	KeyPaths    []string
	WindowHours int // the default when the type sets none
}

// MessageTypes lists the message types within scope, by tenant and code.
func (s *Service) MessageTypes(ctx context.Context, scope auth.Scope) ([]MessageType, error) {
	rows, err := db.On(s.pool).MessageTypeListForAdmin(ctx, scope.TenantFilter())
	if err != nil {
		return nil, fmt.Errorf("list message types: %w", err)
	}
	out := make([]MessageType, len(rows))
	for i, r := range rows {
		out[i] = MessageType{
			Tenant: r.TenantSlug, Code: r.MessageType.Code, KeyPaths: r.MessageType.DuplicateKeyFields,
			WindowHours: messagetype.DefaultWindowHours,
		}
		if w := r.MessageType.DuplicateWindowHours; w != nil {
			out[i].WindowHours = int(*w)
		}
	}
	return out, nil
}
