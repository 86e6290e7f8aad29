package provision

import (
	"context"
	"fmt"
	"net/mail"

	"github.com/lefia/edihub/internal/apperr"
	"github.com/lefia/edihub/internal/auditevent"
	"github.com/lefia/edihub/internal/auth"
	"github.com/lefia/edihub/internal/db"
	"github.com/lefia/edihub/internal/password"
)

// UserSpec is what a new admin user is made of.
type UserSpec struct {
	Email      string
	Role       string
	TenantSlug string // empty: a global user who sees every tenant
	Password   string
	// Actor is who creates the user, for the audit trail (e.g. "user:7" for
	// an admin in the browser); empty means the CLI.
	Actor string
}

// CreateUser creates an admin user with a hashed password.
func (s *Service) CreateUser(ctx context.Context, spec UserSpec) (int64, error) {
	if err := validateUser(spec); err != nil {
		return 0, err
	}
	hash, err := hashPassword(spec.Password)
	if err != nil {
		return 0, err
	}
	var id int64
	err = db.WithTx(ctx, s.pool, func(q *db.Queries) error {
		var tenantID *int64
		if spec.TenantSlug != "" {
			t, err := tenant(ctx, q, spec.TenantSlug)
			if err != nil {
				return err
			}
			tenantID = &t.ID
		}
		var err error
		id, err = q.UserInsert(ctx, db.UserInsertParams{
			Email: spec.Email, PasswordHash: hash, Role: spec.Role, TenantID: tenantID,
		})
		if err != nil {
			return alreadyExists(err, "user %q already exists", spec.Email)
		}
		who := spec.Actor
		if who == "" {
			who = auditevent.ActorCLI
		}
		return auditevent.Record(ctx, q, who, tenantID, auditevent.UserCreated,
			map[string]any{"user_id": id, "email": spec.Email, "role": spec.Role})
	})
	return id, err
}

func validateUser(spec UserSpec) error {
	if spec.Role != auth.RoleAdmin && spec.Role != auth.RoleViewer {
		return apperr.New(apperr.Invalid, "invalid-field", "role %q is not valid: use admin or viewer", spec.Role)
	}
	addr, err := mail.ParseAddress(spec.Email)
	if err != nil || addr.Address != spec.Email || len(spec.Email) > 254 {
		return apperr.New(apperr.Invalid, "invalid-field", "email %q is not a valid address", spec.Email)
	}
	return nil
}

// User is a user as the users page and `user list` show them.
type User = db.UserListRow

// Users lists the users scope may see: a tenant's own users, or everyone.
func (s *Service) Users(ctx context.Context, scope auth.Scope) ([]User, error) {
	users, err := db.On(s.pool).UserList(ctx, scope.TenantFilter())
	if err != nil {
		return nil, fmt.Errorf("list users: %w", err)
	}
	return users, nil
}

// UserState is "active" or "disabled".
func UserState(u User) string {
	if u.DisabledAt != nil {
		return "disabled"
	}
	return "active"
}

// DisableUser keeps the user with id from signing in and ends every session
// the user has at once. Nobody disables themself, so that an admin cannot
// lock themself out by a slip; another admin or the CLI can.
func (s *Service) DisableUser(ctx context.Context, by By, id int64) error {
	if id == by.UserID {
		return apperr.New(apperr.Forbidden, "own-account", "you cannot disable your own account: ask another administrator")
	}
	return s.changeUser(ctx, by, id, auditevent.UserDisabled, func(q *db.Queries) ([]db.User, error) {
		return q.UserDisable(ctx, db.UserDisableParams{ID: id, ScopeTenantID: by.Scope.TenantFilter()})
	})
}

// EnableUser lets a disabled user sign in again; the sessions the disabling
// ended stay ended.
func (s *Service) EnableUser(ctx context.Context, by By, id int64) error {
	return s.changeUser(ctx, by, id, auditevent.UserEnabled, func(q *db.Queries) ([]db.User, error) {
		return q.UserEnable(ctx, db.UserEnableParams{ID: id, ScopeTenantID: by.Scope.TenantFilter()})
	})
}

// ResetPassword gives the user with id a new, generated password, ends
// every session the user has, and returns the password to be shown once.
// It is generated rather than typed by the admin so that it is strong and
// not one the admin uses elsewhere; the admin hands it over. Nobody resets
// their own password here: it would take no knowledge of the current one,
// so whoever held an admin's open session could lock the admin out.
func (s *Service) ResetPassword(ctx context.Context, by By, id int64) (string, error) {
	if id == by.UserID {
		return "", apperr.New(apperr.Forbidden, "own-account", "you cannot reset your own password here: ask another administrator")
	}
	pw, err := randomPassword()
	if err != nil {
		return "", err
	}
	hash, err := hashPassword(pw)
	if err != nil {
		return "", err
	}
	err = s.changeUser(ctx, by, id, auditevent.UserPasswordReset, func(q *db.Queries) ([]db.User, error) {
		return q.UserSetPassword(ctx, db.UserSetPasswordParams{ID: id, PasswordHash: hash, ScopeTenantID: by.Scope.TenantFilter()})
	})
	if err != nil {
		return "", err
	}
	return pw, nil
}

// changeUser makes a change to a user of by's scope and records it as
// action, in one transaction.
func (s *Service) changeUser(ctx context.Context, by By, id int64, action string, change func(*db.Queries) ([]db.User, error)) error {
	return db.WithTx(ctx, s.pool, func(q *db.Queries) error {
		users, err := change(q)
		if err != nil {
			return fmt.Errorf("%s %d: %w", action, id, err)
		}
		if len(users) == 0 {
			return notInScope("user", id)
		}
		u := users[0]
		return auditevent.Record(ctx, q, by.Actor, u.TenantID, action, map[string]any{"user_id": u.ID, "email": u.Email})
	})
}

// setPassword replaces a user's password and ends the user's sessions; the
// demo uses it to hand out a fresh login on every run.
func setPassword(ctx context.Context, q *db.Queries, userID int64, pw string) error {
	hash, err := hashPassword(pw)
	if err != nil {
		return err
	}
	if _, err := q.UserSetPassword(ctx, db.UserSetPasswordParams{ID: userID, PasswordHash: hash}); err != nil {
		return fmt.Errorf("set password: %w", err)
	}
	return nil
}

// hashPassword hashes pw, reporting a too short or too long one as invalid input.
func hashPassword(pw string) (string, error) {
	if err := password.Validate(pw); err != nil {
		return "", apperr.New(apperr.Invalid, "invalid-field", "%v", err)
	}
	return password.Hash(pw)
}
