package auth

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/lefia/edihub/internal/apperr"
	"github.com/lefia/edihub/internal/auditevent"
	"github.com/lefia/edihub/internal/db"
	"github.com/lefia/edihub/internal/password"
)

// The login throttle: a sign-in is refused, before its password is checked,
// when its email or its remote address had MaxFailures failed sign-ins
// within FailureWindow. Failures are audit events in the database, so every
// replica sees the same count and the throttle needs no state of its own.
const (
	MaxFailures   = 5
	FailureWindow = 15 * time.Minute
)

// maxRecordedEmail bounds what a failed sign-in writes to the audit trail;
// longer input cannot be an email address of a user.
const maxRecordedEmail = 254

var (
	// ErrInvalidCredentials does not say whether the email or the password
	// was wrong, so that sign-ins cannot probe which emails have accounts.
	ErrInvalidCredentials = apperr.New(apperr.Unauthorized, "invalid-credentials",
		"the email or the password is not right")
	ErrThrottled = apperr.New(apperr.TooManyRequests, "too-many-attempts",
		"too many failed sign-ins for this account or from this address: wait %d minutes and try again",
		int(FailureWindow/time.Minute))
	errMissingCredentials = apperr.New(apperr.Invalid, "missing-field", "enter your email and your password")
)

// timingHash is checked against when the email has no account, so that a
// sign-in takes as long whether or not the email exists.
var timingHash = sync.OnceValues(func() (string, error) {
	return password.Hash("edihub-no-such-user")
})

// Login checks an email and password from remoteAddr and records the
// outcome in the audit trail. It returns the user on success,
// ErrInvalidCredentials, ErrThrottled, or a database error.
func (s *Service) Login(ctx context.Context, email, pw, remoteAddr string) (User, error) {
	email = strings.TrimSpace(email)
	if email == "" || pw == "" {
		return User{}, errMissingCredentials
	}
	if len(email) > maxRecordedEmail {
		email = email[:maxRecordedEmail]
	}
	q := db.New(s.pool)
	failures, err := q.AuditEventLoginFailures(ctx, db.AuditEventLoginFailuresParams{
		WindowSeconds: FailureWindow.Seconds(), Email: email, RemoteAddr: remoteAddr,
	})
	if err != nil {
		return User{}, fmt.Errorf("count failed sign-ins: %w", err)
	}
	if failures >= MaxFailures {
		return User{}, ErrThrottled
	}

	row, err := q.UserGetByEmail(ctx, email)
	switch {
	case db.IsNotFound(err):
		hash, err := timingHash()
		if err != nil {
			return User{}, err
		}
		_ = password.Check(pw, hash) // only spends the time a real check takes
		return User{}, fail(ctx, q, email, remoteAddr, "unknown_email")
	case err != nil:
		return User{}, fmt.Errorf("load user: %w", err)
	}
	if err := password.Check(pw, row.PasswordHash); errors.Is(err, password.ErrMismatch) {
		return User{}, fail(ctx, q, email, remoteAddr, "wrong_password")
	} else if err != nil {
		return User{}, err
	}

	u, err := loadUser(ctx, q, row.ID)
	if err != nil {
		return User{}, err
	}
	return u, auditevent.Record(ctx, q, u.Actor(), u.TenantID, auditevent.LoggedIn,
		map[string]any{"email": u.Email, "remote_addr": remoteAddr})
}

// fail records a failed sign-in outside any tenant (the email may belong to
// no one) and returns ErrInvalidCredentials.
func fail(ctx context.Context, q *db.Queries, email, remoteAddr, reason string) error {
	if err := auditevent.Record(ctx, q, auditevent.ActorAnonymous, nil, auditevent.LoginFailed,
		map[string]any{"email": email, "remote_addr": remoteAddr, "reason": reason}); err != nil {
		return err
	}
	return ErrInvalidCredentials
}

// Logout records that u signed out; the caller destroys the session.
func (s *Service) Logout(ctx context.Context, u User, remoteAddr string) error {
	return auditevent.Record(ctx, db.New(s.pool), u.Actor(), u.TenantID, auditevent.LoggedOut,
		map[string]any{"email": u.Email, "remote_addr": remoteAddr})
}
