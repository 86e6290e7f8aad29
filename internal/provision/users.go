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

// setPassword replaces a user's password; the demo uses it to hand out a
// fresh login on every run.
func setPassword(ctx context.Context, q *db.Queries, userID int64, pw string) error {
	hash, err := hashPassword(pw)
	if err != nil {
		return err
	}
	if err := q.UserSetPassword(ctx, db.UserSetPasswordParams{ID: userID, PasswordHash: hash}); err != nil {
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
