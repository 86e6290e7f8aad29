package adminlist

// An admin list's filter carries tenant, environment and message type
// names in its URL; Resolve turns them into the ids its queries take.
// Names are looked up within the signed-in user's scope, so a
// tenant-scoped user naming another tenant learns nothing about it.

import (
	"context"
	"errors"
	"fmt"

	"github.com/lefia/edihub/internal/auth"
	"github.com/lefia/edihub/internal/db"
)

// Names are the names a list's filter carries, embedded in it; "" matches
// anything.
type Names struct {
	Tenant      string // slug
	Environment string // slug, within the tenant
	MessageType string // code, within the tenant
}

// IDs are the names resolved; nil where no name was given. TenantID is the
// scope's tenant when the user is scoped to one and named none.
type IDs struct {
	TenantID, EnvironmentID, MessageTypeID *int64
	// Tenants are the slugs of the tenants the scope allows, which a
	// filter form offers.
	Tenants []string
}

// Resolve looks n up among the tenants the scope allows and within the
// tenant. What cannot be found is described in problems; err is a failure
// of the database.
func Resolve(ctx context.Context, q *db.Queries, scope auth.Scope, n Names) (ids IDs, problems []string, err error) {
	tenants, err := q.TenantList(ctx, scope.TenantFilter())
	if err != nil {
		return ids, nil, fmt.Errorf("list tenants: %w", err)
	}
	ids.Tenants = make([]string, len(tenants))
	for i, t := range tenants {
		ids.Tenants[i] = t.Slug
	}
	ids.TenantID = scope.TenantFilter()
	if n.Tenant != "" {
		ids.TenantID = nil
		for _, t := range tenants {
			if t.Slug == n.Tenant {
				ids.TenantID = &t.ID
			}
		}
		if ids.TenantID == nil {
			problems = append(problems, fmt.Sprintf("there is no tenant %q", n.Tenant))
		}
	}
	switch {
	case n.Environment == "" && n.MessageType == "":
	case ids.TenantID == nil && n.Tenant == "":
		problems = append(problems, "choose a tenant to filter by environment or message type")
	case ids.TenantID != nil:
		tenantID := *ids.TenantID
		ids.EnvironmentID, err = lookup(&problems, "environment", n.Environment, func() (int64, error) {
			env, err := q.EnvironmentGetBySlug(ctx, db.EnvironmentGetBySlugParams{TenantID: tenantID, Slug: n.Environment})
			return env.ID, err
		})
		if err != nil {
			return ids, nil, err
		}
		ids.MessageTypeID, err = lookup(&problems, "message type", n.MessageType, func() (int64, error) {
			mt, err := q.MessageTypeGetByCode(ctx, db.MessageTypeGetByCodeParams{TenantID: tenantID, Code: n.MessageType})
			return mt.ID, err
		})
		if err != nil {
			return ids, nil, err
		}
	}
	return ids, problems, nil
}

// lookup returns the id that get finds for a name within the filter's
// tenant: nil when no name was given, or when the tenant has none by that
// name, which is noted in problems.
func lookup(problems *[]string, what, name string, get func() (int64, error)) (*int64, error) {
	if name == "" {
		return nil, nil
	}
	id, err := get()
	switch {
	case errors.Is(err, db.ErrNotFound):
		*problems = append(*problems, fmt.Sprintf("the tenant has no %s %q", what, name))
		return nil, nil
	case err != nil:
		return nil, fmt.Errorf("load %s %q: %w", what, name, err)
	}
	return &id, nil
}
