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
	// ErrDisabled is told only to whoever gave the right password, so it
	// reveals nothing that a sign-in did not reveal before.
	ErrDisabled = apperr.New(apperr.Forbidden, "account-disabled",
		"this account is disabled: ask an administrator to enable it")
	errMissingCredentials = apperr.New(apperr.Invalid, "missing-field", "enter your email and your password")
)

// timingHash is checked against when the email has no account, so that a
// sign-in takes as long whether or not the email exists.
var timingHash = sync.OnceValues(func() (string, error) {
	return password.Hash("edihub-no-such-user")
})

// MaxConcurrentChecks bounds the password checks running at once in one
// process. An Argon2id check holds 64 MiB for its duration, so without a
// bound a burst of sign-ins, with or without an account, is a burst of
// memory; with it, memory for checks stays under MaxConcurrentChecks × 64 MiB.
const MaxConcurrentChecks = 2

// checkQueueWait is how long a sign-in waits for a free check before it is
// refused with ErrBusy: long enough for a few checks ahead of it.
const checkQueueWait = 3 * time.Second

// ErrBusy refuses a sign-in that found every password check taken for
// checkQueueWait; trying again shortly works.
var ErrBusy = apperr.New(apperr.Unavailable, "sign-in-busy",
	"too many sign-ins are being checked right now: try again in a moment")

// Login checks an email and password from remoteAddr and records the
// outcome in the audit trail. It returns the user on success,
// ErrInvalidCredentials, ErrDisabled, ErrThrottled, ErrBusy, or a database
// error.
//
// The throttle's decision is atomic: under locks per email and per address
// (AuditEventLoginLock), one sign-in at a time counts the recent failures,
// checks the password and records a failure, so that concurrent wrong
// passwords are checked at most MaxFailures times per window, not once each.
func (s *Service) Login(ctx context.Context, email, pw, remoteAddr string) (User, error) {
	email = strings.TrimSpace(email)
	if email == "" || pw == "" {
		return User{}, errMissingCredentials
	}
	if len(email) > maxRecordedEmail {
		email = email[:maxRecordedEmail]
	}
	waitCtx, cancel := context.WithTimeout(ctx, checkQueueWait)
	defer cancel()
	if err := s.checks.Acquire(waitCtx, 1); err != nil {
		if ctx.Err() != nil {
			return User{}, ctx.Err()
		}
		return User{}, ErrBusy
	}
	defer s.checks.Release(1)

	var u User
	var refused error
	err := db.WithTx(ctx, s.pool, func(q *db.Queries) error {
		if err := q.AuditEventLoginLock(ctx, db.AuditEventLoginLockParams{Email: email, RemoteAddr: remoteAddr}); err != nil {
			return fmt.Errorf("lock sign-ins: %w", err)
		}
		failures, err := q.AuditEventLoginFailures(ctx, db.AuditEventLoginFailuresParams{
			WindowSeconds: FailureWindow.Seconds(), Email: email, RemoteAddr: remoteAddr,
		})
		if err != nil {
			return fmt.Errorf("count failed sign-ins: %w", err)
		}
		if failures >= MaxFailures {
			refused = ErrThrottled
			return nil
		}
		// A failure is recorded and committed like a success: it is what
		// the next sign-in counts.
		u, refused, err = s.check(ctx, q, email, pw, remoteAddr)
		return err
	})
	if err != nil {
		return User{}, err
	}
	return u, refused
}

// check compares pw with the password of email's user and records the
// outcome. A wrong password or an unknown email is refused with
// ErrInvalidCredentials after the same Argon2id work, and a disabled
// user's right password with ErrDisabled; err is for failures of the check
// itself.
func (s *Service) check(ctx context.Context, q *db.Queries, email, pw, remoteAddr string) (u User, refused, err error) {
	row, err := q.UserGetByEmail(ctx, email)
	switch {
	case errors.Is(err, db.ErrNotFound):
		hash, err := timingHash()
		if err != nil {
			return User{}, nil, err
		}
		_ = s.checkPassword(pw, hash) // only spends the time a real check takes
		return User{}, ErrInvalidCredentials, fail(ctx, q, email, remoteAddr, "unknown_email")
	case err != nil:
		return User{}, nil, fmt.Errorf("load user: %w", err)
	}
	if err := s.checkPassword(pw, row.PasswordHash); errors.Is(err, password.ErrMismatch) {
		return User{}, ErrInvalidCredentials, fail(ctx, q, email, remoteAddr, "wrong_password")
	} else if err != nil {
		return User{}, nil, err
	}
	if row.DisabledAt != nil {
		return User{}, ErrDisabled, fail(ctx, q, email, remoteAddr, "disabled")
	}
	u, err = loadUser(ctx, q, row.ID)
	if err != nil {
		return User{}, nil, err
	}
	return u, nil, auditevent.Record(ctx, q, u.Actor(), u.TenantID, auditevent.LoggedIn,
		map[string]any{"email": u.Email, "remote_addr": remoteAddr})
}

// fail records a failed sign-in outside any tenant (the email may belong to
// no one).
func fail(ctx context.Context, q *db.Queries, email, remoteAddr, reason string) error {
	return auditevent.Record(ctx, q, auditevent.ActorAnonymous, nil, auditevent.LoginFailed,
		map[string]any{"email": email, "remote_addr": remoteAddr, "reason": reason})
}

// Logout records that u signed out; the caller destroys the session.
func (s *Service) Logout(ctx context.Context, u User, remoteAddr string) error {
	return auditevent.Record(ctx, db.On(s.pool), u.Actor(), u.TenantID, auditevent.LoggedOut,
		map[string]any{"email": u.Email, "remote_addr": remoteAddr})
}
