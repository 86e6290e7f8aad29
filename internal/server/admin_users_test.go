package server_test

import (
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/lefia/edihub/internal/auth"
	"github.com/lefia/edihub/internal/testfactory"
)

var newPassword = regexp.MustCompile(`id="new-password-secret">([A-Za-z0-9_-]+)<`)

// userID is the id of the user with email.
func (b *testBundle) userID(t *testing.T, email string) int64 {
	t.Helper()
	return int64(b.count(t, `SELECT id FROM users WHERE email = $1`, email))
}

// signInAnswer is the status and problem of a sign-in with pw.
func signInAnswer(t *testing.T, b *testBundle, email, pw string) (int, string) {
	t.Helper()
	c := b.client(t)
	c.get("/admin/login")
	r := c.submit("/admin/login", url.Values{"email": {email}, "password": {pw}})
	if r.status == http.StatusSeeOther {
		return r.status, ""
	}
	return r.status, problemOf(t, string(r.body))
}

// Disabling a user ends their open session with the very next request and
// keeps them from signing in, which tells them so only once their password
// is right; enabled again, they sign in, but the ended session stays ended.
// A reset password is shown once, ends the user's sessions, and is the only
// one that works afterwards. Nobody disables themself.
func TestAdminDisablesEnablesAndResetsUsers(t *testing.T) {
	t.Parallel()
	site := newAdminSite(t)
	admin := site.client(t)
	adminEmail := site.user(t, "admin@acme.example", auth.RoleAdmin, "acme")
	admin.login(adminEmail)
	clerk := site.client(t)
	clerkEmail := site.user(t, "clerk@acme.example", auth.RoleViewer, "acme")
	clerk.login(clerkEmail)
	clerkID := site.userID(t, clerkEmail)
	require.Equal(t, http.StatusOK, clerk.get("/admin/audit").status)

	page := string(admin.get("/admin/users").body)
	require.Contains(t, page, fmt.Sprintf(`action="/admin/users/%d/disable"`, clerkID))
	require.NotContains(t, page, fmt.Sprintf(`action="/admin/users/%d/disable"`, site.userID(t, adminEmail)), "no button to disable oneself")

	disabled := admin.submit(fmt.Sprintf("/admin/users/%d/disable", clerkID), url.Values{})
	require.Equal(t, http.StatusSeeOther, disabled.status, "%s", disabled.body)
	require.Contains(t, string(admin.get(disabled.header.Get("Location")).body), `id="user-changed"`)
	ended := clerk.get("/admin/audit")
	require.Equal(t, http.StatusSeeOther, ended.status, "the disabled user's session ends at once")
	require.Contains(t, ended.header.Get("Location"), "/admin/login")
	require.Equal(t, http.StatusSeeOther, clerk.get("/admin/audit").status, "and stays ended")

	status, problem := signInAnswer(t, site.testBundle, clerkEmail, testfactory.Password)
	require.Equal(t, http.StatusForbidden, status)
	require.Contains(t, problem, "account is disabled")
	status, problem = signInAnswer(t, site.testBundle, clerkEmail, "not the password at all")
	require.Equal(t, http.StatusUnauthorized, status)
	require.Equal(t, "the email or the password is not right", problem, "a wrong password says nothing of the account")

	enabled := admin.submit(fmt.Sprintf("/admin/users/%d/enable", clerkID), url.Values{})
	require.Equal(t, http.StatusSeeOther, enabled.status, "%s", enabled.body)
	require.Contains(t, string(admin.get(enabled.header.Get("Location")).body), "can sign in again")
	status, _ = signInAnswer(t, site.testBundle, clerkEmail, testfactory.Password)
	require.Equal(t, http.StatusSeeOther, status)

	clerk.login(clerkEmail)
	admin.get("/admin/users")
	reset := admin.submit(fmt.Sprintf("/admin/users/%d/reset-password", clerkID), url.Values{})
	require.Equal(t, http.StatusOK, reset.status, "%s", reset.body)
	m := newPassword.FindSubmatch(reset.body)
	require.NotNil(t, m, "the new password is shown: %s", reset.body)
	pw := string(m[1])
	require.Len(t, pw, 24)
	require.NotContains(t, string(admin.get("/admin/users").body), pw, "and shown only once")
	require.Equal(t, http.StatusSeeOther, clerk.get("/admin/audit").status, "a new password ends the user's sessions")
	status, _ = signInAnswer(t, site.testBundle, clerkEmail, testfactory.Password)
	require.Equal(t, http.StatusUnauthorized, status, "the old password is gone")
	status, _ = signInAnswer(t, site.testBundle, clerkEmail, pw)
	require.Equal(t, http.StatusSeeOther, status)

	adminID := site.userID(t, adminEmail)
	admin.get("/admin/users")
	for _, verb := range []string{"disable", "reset-password"} {
		self := admin.submit(fmt.Sprintf("/admin/users/%d/%s", adminID, verb), url.Values{})
		require.Equal(t, http.StatusForbidden, self.status, verb)
		require.Contains(t, string(self.body), `id="user-change-problem"`, verb)
		require.Contains(t, string(self.body), "your own", verb)
	}
	require.Equal(t, http.StatusOK, admin.get("/admin/users").status, "the admin is still signed in")

	require.Equal(t, 3, site.count(t, `SELECT count(*) FROM audit_events
		WHERE actor = $1 AND action IN ('user.disabled', 'user.enabled', 'user.password_reset')
		  AND (details->>'user_id')::bigint = $2 AND tenant_id = (SELECT id FROM tenants WHERE slug = 'acme')`,
		fmt.Sprintf("user:%d", adminID), clerkID))
}

// A tenant's admin neither sees nor changes another tenant's users or a
// global user (404, as for an id that does not exist); a viewer changes
// nothing and gets no button; a form without the session's token is refused.
func TestAdminUserChangesKeepToScopeAndRole(t *testing.T) {
	t.Parallel()
	site := newAdminSite(t)
	globexUser := site.user(t, "clerk@globex.example", auth.RoleViewer, "globex")
	globalUser := site.user(t, "root@example.com", auth.RoleAdmin, "")
	acmeClerk := site.user(t, "clerk@acme.example", auth.RoleViewer, "acme")

	admin := site.client(t)
	admin.login(site.user(t, "admin@acme.example", auth.RoleAdmin, "acme"))
	list := string(admin.get("/admin/users").body)
	require.NotContains(t, list, globexUser)
	require.NotContains(t, list, globalUser)
	for _, target := range []string{globexUser, globalUser} {
		for _, verb := range []string{"disable", "enable", "reset-password"} {
			r := admin.submit(fmt.Sprintf("/admin/users/%d/%s", site.userID(t, target), verb), url.Values{})
			require.Equal(t, http.StatusNotFound, r.status, "%s %s", verb, target)
		}
	}
	require.Zero(t, site.count(t, `SELECT count(*) FROM users WHERE disabled_at IS NOT NULL OR session_epoch > 0`))

	viewer := site.client(t)
	viewer.login(site.user(t, "viewer@acme.example", auth.RoleViewer, "acme"))
	page := string(viewer.get("/admin/users").body)
	require.Contains(t, page, acmeClerk)
	require.NotContains(t, page, "/disable")
	require.NotContains(t, page, "/reset-password")
	for _, verb := range []string{"disable", "reset-password"} {
		r := viewer.submit(fmt.Sprintf("/admin/users/%d/%s", site.userID(t, acmeClerk), verb), url.Values{})
		require.Equal(t, http.StatusForbidden, r.status, verb)
	}

	forged := admin.post(fmt.Sprintf("/admin/users/%d/disable", site.userID(t, acmeClerk)), url.Values{})
	require.Equal(t, http.StatusForbidden, forged.status, "no CSRF token, no change")
	require.Zero(t, site.count(t, `SELECT count(*) FROM users WHERE disabled_at IS NOT NULL OR session_epoch > 0`))
	require.Zero(t, site.count(t, `SELECT count(*) FROM audit_events WHERE action IN ('user.disabled', 'user.enabled', 'user.password_reset')`))
}
