// Package typeeditor is the admin's message-type editor. It lists the
// message types a user may see with what the last days brought, reads the
// editor's form into a proposal of duplicate_key_fields and window checked
// with the rules of package messagetype, previews one payload's fingerprint
// with the code ingest runs, replays the type's last stored messages under
// the current and the proposed settings to show what a change would have
// blocked, and saves a change only over the version the admin opened, with
// an audit event of before and after in the same transaction.
package typeeditor

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/lefia/edihub/internal/apperr"
	"github.com/lefia/edihub/internal/auth"
	"github.com/lefia/edihub/internal/dashboard"
	"github.com/lefia/edihub/internal/db"
	"github.com/lefia/edihub/internal/messagetype"
	"github.com/lefia/edihub/internal/provision"
)

// Service reads and changes message types for the admin pages.
type Service struct {
	pool    *pgxpool.Pool
	q       *db.Queries
	prov    *provision.Service
	auth    *auth.Service
	traffic *dashboard.Service
}

// New returns a Service on pool.
func New(pool *pgxpool.Pool) *Service {
	return &Service{pool: pool, q: db.On(pool), prov: provision.New(pool), auth: auth.New(pool), traffic: dashboard.New(pool)}
}

// AnnouncingChanges returns s telling changed of every tenant whose message
// types it created or saved, once the change committed, as
// provision.Service.AnnouncingChanges does.
func (s *Service) AnnouncingChanges(changed func(tenantID int64)) *Service {
	c := *s
	c.prov = s.prov.AnnouncingChanges(changed)
	return &c
}

// Type is a message type as the editor shows it.
type Type struct {
	ID          int64
	TenantID    int64
	Tenant      string // slug
	Code        string
	Paths       []string // duplicate_key_fields, in order
	WindowHours *int32   // duplicate_window_hours; nil means the default
	Version     int32
	UpdatedAt   time.Time
}

// Window is the window in force, in hours.
func (t Type) Window() int32 { return messagetype.WindowHours(t.WindowHours) }

// Saved reports whether p proposes exactly the settings t has stored: the
// same paths in the same order and the same window, where an explicit 168
// differs from the default it equals, because saving it would store it.
func (t Type) Saved(p Proposal) bool {
	if !slices.Equal(t.Paths, p.Paths) || (t.WindowHours == nil) != (p.WindowHours == nil) {
		return false
	}
	return t.WindowHours == nil || int(*t.WindowHours) == *p.WindowHours
}

// Listed is a message type on the list page, with the last seven days.
type Listed struct {
	Type
	Received   int64 // messages stored
	Duplicates int64 // duplicates blocked
}

// List returns the message types scope sees, by tenant and code, with
// the last seven days' counts of the dashboard, which reads the traffic
// rollups (package dashboard) rather than a week of rows.
func (s *Service) List(ctx context.Context, scope auth.Scope) ([]Listed, error) {
	rows, err := s.q.MessageTypeListForAdmin(ctx, scope.TenantFilter())
	if err != nil {
		return nil, fmt.Errorf("list message types: %w", err)
	}
	traffic, err := s.traffic.Load(ctx, scope, "", time.Now())
	if err != nil {
		return nil, err
	}
	week := make(map[int64]dashboard.Type, len(traffic.Types))
	for _, t := range traffic.Types {
		week[t.ID] = t
	}
	list := make([]Listed, len(rows))
	for i, r := range rows {
		t := week[r.MessageType.ID]
		list[i] = Listed{Type: newType(r.MessageType, r.TenantSlug), Received: t.Received.Week, Duplicates: t.Blocked.Week}
	}
	return list, nil
}

// Get loads message type id within scope. A type outside the scope is
// reported as missing, so its existence is not revealed.
func (s *Service) Get(ctx context.Context, scope auth.Scope, id int64) (Type, error) {
	return getType(ctx, s.q, scope, id)
}

func getType(ctx context.Context, q *db.Queries, scope auth.Scope, id int64) (Type, error) {
	row, err := q.MessageTypeGetForAdmin(ctx, db.MessageTypeGetForAdminParams{ID: id, ScopeTenantID: scope.TenantFilter()})
	if errors.Is(err, db.ErrNotFound) {
		return Type{}, apperr.New(apperr.NotFound, "not-found", "there is no message type %d", id)
	}
	if err != nil {
		return Type{}, fmt.Errorf("load message type %d: %w", id, err)
	}
	return newType(row.MessageType, row.TenantSlug), nil
}

// newType is mt of the tenant with slug tenant as the editor shows it.
func newType(mt db.MessageType, tenant string) Type {
	return Type{
		ID: mt.ID, TenantID: mt.TenantID, Tenant: tenant, Code: mt.Code, Paths: mt.DuplicateKeyFields,
		WindowHours: mt.DuplicateWindowHours, Version: mt.Version, UpdatedAt: mt.UpdatedAt.UTC(),
	}
}
