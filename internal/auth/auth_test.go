package auth_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/lefia/edihub/internal/apperr"
	"github.com/lefia/edihub/internal/auth"
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
	_, err = svc.User(ctx, id)
	require.ErrorIs(t, err, auth.ErrNoUser)
}
