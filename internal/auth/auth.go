// Package auth decides who may use the admin pages and what they may see and
// do: it checks a sign-in (an Argon2id password and a small throttle on
// failures), loads the signed-in user, and holds the rules for roles and the
// tenant scope. It knows nothing of HTTP: the server keeps the session and
// asks this package.
package auth

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5/pgxpool"
	"golang.org/x/sync/semaphore"

	"github.com/lefia/edihub/internal/apperr"
	"github.com/lefia/edihub/internal/db"
	"github.com/lefia/edihub/internal/password"
)

// Roles an admin user may have.
const (
	RoleAdmin  = "admin"
	RoleViewer = "viewer"
)

// User is a signed-in admin user.
type User struct {
	ID         int64
	Email      string
	Role       string // RoleAdmin or RoleViewer
	TenantID   *int64 // nil for a global user
	TenantSlug string // "" for a global user
	// SessionEpoch is the user's current session generation: a session
	// keeps the epoch it signed in at, and one whose epoch is not this is
	// over (a new password or a disabling moves it on).
	SessionEpoch int32
}

// IsAdmin reports whether u may change things; viewers only read.
func (u User) IsAdmin() bool { return u.Role == RoleAdmin }

// Actor names u in the audit trail.
func (u User) Actor() string { return fmt.Sprintf("user:%d", u.ID) }

// Scope is the part of the data u may see. The zero User, which no
// signed-in request has, sees nothing.
func (u User) Scope() Scope {
	switch {
	case u.ID == 0:
		return Scope{}
	case u.TenantID == nil:
		return GlobalScope()
	}
	return TenantScope(*u.TenantID)
}

// TenantForNewUser returns the tenant (a slug, "" for global) of a user that
// u creates when asking for requested: a viewer creates nobody, a global
// admin creates users anywhere, and a tenant's admin only in that tenant.
func (u User) TenantForNewUser(requested string) (string, error) {
	switch {
	case !u.IsAdmin():
		return "", ErrAdminOnly
	case u.TenantID == nil:
		return requested, nil
	case requested == "" || requested == u.TenantSlug:
		return u.TenantSlug, nil
	}
	return "", apperr.New(apperr.Forbidden, "forbidden",
		"you can create users in tenant %q only", u.TenantSlug)
}

// ErrEmailTaken answers a tenant's admin whose new user's email address is
// already a user's. Addresses are unique across the hub, because a sign-in
// names no tenant, so the holder may be a user of another tenant; the answer
// is the same wherever the address is taken and says nothing of its holder.
var ErrEmailTaken = apperr.New(apperr.Conflict, "email-unavailable",
	"this email address cannot be given to a new user: use another one, or ask a global administrator")

// NewUserConflict is what u is told when a user u creates clashes with one
// that exists: a global admin sees every user and gets conflict as it is; a
// tenant's admin gets ErrEmailTaken, which reveals nothing outside the
// tenant.
func (u User) NewUserConflict(conflict error) error {
	if u.TenantID == nil {
		return conflict
	}
	return ErrEmailTaken
}

// ErrAdminOnly refuses a change to a user whose role is viewer.
var ErrAdminOnly = apperr.New(apperr.Forbidden, "forbidden", "this needs the admin role; viewers can only read")

// Scope is the set of tenants a user may see: one tenant or all of them. The
// zero Scope sees nothing, so a caller that forgets to set it fails closed.
type Scope struct {
	tenantID int64
	global   bool
}

// GlobalScope sees every tenant.
func GlobalScope() Scope { return Scope{global: true} }

// TenantScope sees one tenant.
func TenantScope(id int64) Scope { return Scope{tenantID: id} }

// TenantFilter is the value of the scope_tenant_id parameter that every
// admin query takes: nil for a global scope, else the tenant's id. The zero
// Scope yields 0, which no tenant has.
func (s Scope) TenantFilter() *int64 {
	if s.global {
		return nil
	}
	id := s.tenantID
	return &id
}

// Allows reports whether the scope includes the tenant.
func (s Scope) Allows(tenantID int64) bool {
	return s.global || (s.tenantID != 0 && s.tenantID == tenantID)
}

// Service checks sign-ins and loads users.
type Service struct {
	pool *pgxpool.Pool
	// checks admits MaxConcurrentChecks password checks at a time.
	checks *semaphore.Weighted
	// checkPassword is password.Check; tests count the checks through it.
	checkPassword func(pw, hash string) error
}

// New returns a Service on pool.
func New(pool *pgxpool.Pool) *Service {
	return &Service{pool: pool, checks: semaphore.NewWeighted(MaxConcurrentChecks), checkPassword: password.Check}
}

// ErrNoUser means the session is over: its user no longer exists, is
// disabled, or had every session ended since it signed in.
var ErrNoUser = errors.New("the session's user does not exist, is disabled or was signed out")

// SessionUser loads the user with id for a request of a session signed in
// at epoch. It is read on every request, so that a changed role, a disabled
// user or a new password applies at once.
func (s *Service) SessionUser(ctx context.Context, id int64, epoch int32) (User, error) {
	u, err := loadUser(ctx, db.On(s.pool), id)
	if err == nil && u.SessionEpoch != epoch {
		return User{}, ErrNoUser
	}
	return u, err
}

func loadUser(ctx context.Context, q *db.Queries, id int64) (User, error) {
	row, err := q.UserGetForSession(ctx, id)
	if errors.Is(err, db.ErrNotFound) {
		return User{}, ErrNoUser
	}
	if err != nil {
		return User{}, fmt.Errorf("load user %d: %w", id, err)
	}
	u := User{ID: row.ID, Email: row.Email, Role: row.Role, TenantID: row.TenantID, SessionEpoch: row.SessionEpoch}
	if row.TenantSlug != nil {
		u.TenantSlug = *row.TenantSlug
	}
	return u, nil
}
