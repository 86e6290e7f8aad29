package auth_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/lefia/edihub/internal/apperr"
	"github.com/lefia/edihub/internal/auth"
	"github.com/lefia/edihub/internal/password"
	"github.com/lefia/edihub/internal/pgtest"
	"github.com/lefia/edihub/internal/testfactory"
)

func TestScope(t *testing.T) {
	t.Parallel()
	require.Nil(t, auth.GlobalScope().TenantFilter())
	require.True(t, auth.GlobalScope().Allows(7))

	five := auth.TenantScope(5)
	require.Equal(t, int64(5), *five.TenantFilter())
	require.True(t, five.Allows(5))
	require.False(t, five.Allows(6))

	var zero auth.Scope
	require.Equal(t, int64(0), *zero.TenantFilter(), "no tenant has id 0")
	require.False(t, zero.Allows(0))
	require.False(t, zero.Allows(5))

	tenant := int64(5)
	require.Equal(t, five, auth.User{ID: 1, TenantID: &tenant}.Scope())
	require.Equal(t, auth.GlobalScope(), auth.User{ID: 1}.Scope())
	require.Equal(t, zero, auth.User{}.Scope(), "no signed-in user, no data")
}

func TestTenantForNewUser(t *testing.T) {
	t.Parallel()
	acme := int64(1)
	global := auth.User{Role: auth.RoleAdmin}
	tenantAdmin := auth.User{Role: auth.RoleAdmin, TenantID: &acme, TenantSlug: "acme"}
	viewer := auth.User{Role: auth.RoleViewer}

	tests := []struct {
		name      string
		by        auth.User
		requested string
		want      string
		forbidden bool
	}{
		{"global admin, global user", global, "", "", false},
		{"global admin, any tenant", global, "globex", "globex", false},
		{"tenant admin, own tenant by default", tenantAdmin, "", "acme", false},
		{"tenant admin, own tenant by name", tenantAdmin, "acme", "acme", false},
		{"tenant admin, another tenant", tenantAdmin, "globex", "", true},
		{"viewer", viewer, "", "", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := tt.by.TenantForNewUser(tt.requested)
			if tt.forbidden {
				ae, ok := apperr.As(err)
				require.True(t, ok, "%v", err)
				require.Equal(t, apperr.Forbidden, ae.Kind)
				return
			}
			require.NoError(t, err)
			require.Equal(t, tt.want, got)
		})
	}
}

func TestLoginThrottleWindow(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool := pgtest.Pool(t)
	testfactory.Tenant(t, pool, nil)
	const pw = testfactory.Password
	id := testfactory.User(t, pool, &testfactory.UserOpts{Email: "Ada@acme.example", Role: auth.RoleViewer, Tenant: "acme"}).ID
	svc := auth.New(pool)

	// Failures older than the window do not count.
	_, err := pool.Exec(ctx, `INSERT INTO audit_events (action, actor, details, created_at)
		SELECT 'user.login_failed', 'anonymous', '{"email": "ada@acme.example", "remote_addr": "192.0.2.1"}',
		       now() - interval '16 minutes'
		FROM generate_series(1, 10)`)
	require.NoError(t, err)
	for i := 0; i < auth.MaxFailures-1; i++ {
		_, err := svc.Login(ctx, "ada@acme.example", "wrong", "192.0.2.1")
		require.ErrorIs(t, err, auth.ErrInvalidCredentials)
	}
	u, err := svc.Login(ctx, "  ADA@acme.example ", pw, "192.0.2.1")
	require.NoError(t, err, "emails match without regard to case or spaces")
	require.Equal(t, auth.User{ID: id, Email: "Ada@acme.example", Role: auth.RoleViewer, TenantID: u.TenantID, TenantSlug: "acme"}, u)
	require.False(t, u.IsAdmin())

	_, err = svc.Login(ctx, "ada@acme.example", "wrong", "192.0.2.1")
	require.ErrorIs(t, err, auth.ErrInvalidCredentials)
	_, err = svc.Login(ctx, "ada@acme.example", pw, "192.0.2.99")
	require.ErrorIs(t, err, auth.ErrThrottled, "the email is locked from every address")

	_, err = svc.Login(ctx, "", pw, "192.0.2.1")
	ae, ok := apperr.As(err)
	require.True(t, ok)
	require.Equal(t, apperr.Invalid, ae.Kind)

	require.NoError(t, svc.Logout(ctx, u, "192.0.2.1"))
	var events int
	require.NoError(t, pool.QueryRow(ctx, `SELECT count(*) FROM audit_events
		WHERE action IN ('user.logged_in', 'user.logged_out') AND tenant_id = $1 AND actor = $2`,
		*u.TenantID, u.Actor()).Scan(&events))
	require.Equal(t, 2, events)

	_, err = pool.Exec(ctx, `DELETE FROM users WHERE id = $1`, id)
	require.NoError(t, err)
	_, err = svc.SessionUser(ctx, id, 0)
	require.ErrorIs(t, err, auth.ErrNoUser)
}

// checkCounter wraps the real password check and records how many checks
// ran and the most that ran at once.
type checkCounter struct {
	running, peak, total atomic.Int64
}

func (c *checkCounter) check(pw, hash string) error {
	now := c.running.Add(1)
	defer c.running.Add(-1)
	for {
		peak := c.peak.Load()
		if now <= peak || c.peak.CompareAndSwap(peak, now) {
			break
		}
	}
	c.total.Add(1)
	return password.Check(pw, hash)
}

// signInsAtOnce starts n sign-ins together and returns their errors.
func signInsAtOnce(svc *auth.Service, n int, email, remoteAddr func(i int) string) []error {
	errs := make([]error, n)
	start := make(chan struct{})
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			<-start
			_, errs[i] = svc.Login(context.Background(), email(i), "wrong password, long enough", remoteAddr(i))
		})
	}
	close(start)
	wg.Wait()
	return errs
}

// 24 wrong passwords at once for one account from one address: the
// throttle's count, check and record are one decision, so at most
// MaxFailures passwords are checked; the others are refused unchecked.
func TestConcurrentWrongPasswordsAreCheckedAtMostMaxFailuresTimes(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool := pgtest.Pool(t)
	testfactory.User(t, pool, &testfactory.UserOpts{Email: "ada@acme.example"})
	svc := auth.New(pool)
	var counter checkCounter
	auth.SetPasswordCheck(svc, counter.check)

	errs := signInsAtOnce(svc, 24, func(int) string { return "ada@acme.example" }, func(int) string { return "192.0.2.7" })
	answers := map[string]int{}
	for _, err := range errs {
		ae, ok := apperr.As(err)
		require.True(t, ok, "%v", err)
		answers[ae.Type]++
	}
	checked := int(counter.total.Load())
	require.LessOrEqual(t, checked, auth.MaxFailures, "answers %v", answers)
	require.Equal(t, checked, answers["invalid-credentials"], "answers %v", answers)
	require.Equal(t, 24-checked, answers["too-many-attempts"]+answers["sign-in-busy"], "answers %v", answers)
	var recorded int
	require.NoError(t, pool.QueryRow(ctx, `SELECT count(*) FROM audit_events WHERE action = 'user.login_failed'`).Scan(&recorded))
	require.Equal(t, checked, recorded, "every checked failure is recorded, refused ones are not")
	t.Logf("24 concurrent wrong passwords: %d checked, answers %v", checked, answers)
	require.LessOrEqual(t, counter.peak.Load(), int64(auth.MaxConcurrentChecks))
}

// 24 sign-ins at once for different emails from different addresses, none
// throttled: at most MaxConcurrentChecks Argon2id checks (64 MiB each) run
// at a time, and an unknown email costs a check like a known one.
func TestConcurrentPasswordChecksAreCapped(t *testing.T) {
	t.Parallel()
	pool := pgtest.Pool(t)
	svc := auth.New(pool)
	var counter checkCounter
	auth.SetPasswordCheck(svc, counter.check)

	errs := signInsAtOnce(svc, 24,
		func(i int) string { return fmt.Sprintf("nobody%d@acme.example", i) },
		func(i int) string { return fmt.Sprintf("192.0.2.%d", i) })
	checked := 0
	for _, err := range errs {
		if errors.Is(err, auth.ErrInvalidCredentials) {
			checked++
		} else {
			require.ErrorIs(t, err, auth.ErrBusy, "a sign-in is checked or told the server is busy")
		}
	}
	require.Positive(t, checked)
	require.Equal(t, int64(checked), counter.total.Load(), "every unknown email cost one check")
	require.LessOrEqual(t, counter.peak.Load(), int64(auth.MaxConcurrentChecks), "never more checks at once than the cap")
}

// A disabled user is refused: told so when the password is right, told
// nothing new when it is wrong, and their session is over; a session signed
// in at an earlier epoch (before a new password) is over too.
func TestDisabledUsersAndEndedSessions(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool := pgtest.Pool(t)
	u := testfactory.User(t, pool, &testfactory.UserOpts{Email: "ada@acme.example"})
	svc := auth.New(pool)

	signedIn, err := svc.Login(ctx, "ada@acme.example", testfactory.Password, "192.0.2.1")
	require.NoError(t, err)
	_, err = svc.SessionUser(ctx, u.ID, signedIn.SessionEpoch)
	require.NoError(t, err)

	_, err = pool.Exec(ctx, `UPDATE users SET session_epoch = session_epoch + 1 WHERE id = $1`, u.ID)
	require.NoError(t, err)
	_, err = svc.SessionUser(ctx, u.ID, signedIn.SessionEpoch)
	require.ErrorIs(t, err, auth.ErrNoUser, "a session from an earlier epoch is over")
	again, err := svc.Login(ctx, "ada@acme.example", testfactory.Password, "192.0.2.1")
	require.NoError(t, err)
	require.Equal(t, signedIn.SessionEpoch+1, again.SessionEpoch)

	_, err = pool.Exec(ctx, `UPDATE users SET disabled_at = now() WHERE id = $1`, u.ID)
	require.NoError(t, err)
	_, err = svc.SessionUser(ctx, u.ID, again.SessionEpoch)
	require.ErrorIs(t, err, auth.ErrNoUser, "a disabled user's session is over")
	_, err = svc.Login(ctx, "ada@acme.example", testfactory.Password, "192.0.2.1")
	require.ErrorIs(t, err, auth.ErrDisabled)
	_, err = svc.Login(ctx, "ada@acme.example", "a wrong password", "192.0.2.1")
	require.ErrorIs(t, err, auth.ErrInvalidCredentials)
	var reasons []string
	require.NoError(t, pool.QueryRow(ctx, `SELECT array_agg(details->>'reason' ORDER BY id) FROM audit_events
		WHERE action = 'user.login_failed'`).Scan(&reasons))
	require.Equal(t, []string{"disabled", "wrong_password"}, reasons)
}
