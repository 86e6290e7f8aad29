package server_test

import (
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/lefia/edihub/internal/auth"
	"github.com/lefia/edihub/internal/testfactory"
)

var newIntegrationSecret = regexp.MustCompile(`id="new-secret-value">([^<]+)<`)

// shownSecret is the integration secret a page shows once.
func shownSecret(t *testing.T, r response) string {
	t.Helper()
	require.Equal(t, http.StatusOK, r.status, "%s", r.body)
	m := newIntegrationSecret.FindSubmatch(r.body)
	require.NotNil(t, m, "the page shows the new secret: %s", r.body)
	return string(m[1])
}

// delivers reports the status of a GitHub delivery to integration id
// signed with secret.
func (b *testBundle) delivers(t *testing.T, id, secret string, n int) int {
	t.Helper()
	body := fmt.Appendf(nil, `{"IDOC":{"E1EDK01":{"BELNR":"%d"}}}`, n)
	return b.webhook(t, id, body, githubHeaders(secret, body, fmt.Sprintf("delivery-%d", n))...).status
}

// newestSecretID is the id of an integration's newest secret.
func (b *testBundle) newestSecretID(t *testing.T, integration string) int {
	t.Helper()
	return b.count(t, `SELECT max(id) FROM integration_secrets WHERE integration_id = $1`, integration)
}

// The page lists an integration's secrets but never a secret; a rotation
// shows the new secret once and keeps the old one working through the grace
// period the admin chose, then not; a revoked secret is refused by the very
// next delivery, and an integration without a working secret gets a new one.
func TestAdminIntegrationSecretsRotatedAndRevokedOverHTTP(t *testing.T) {
	t.Parallel()
	site := newAdminSite(t)
	id := site.integration(t, "ORDERS05", "github", githubSecret)
	admin := site.client(t)
	admin.login(site.user(t, "admin@acme.example", auth.RoleAdmin, "acme"))

	page := string(admin.get("/admin/integrations").body)
	require.Contains(t, page, fmt.Sprintf(`id="integration-%s"`, id))
	require.NotContains(t, page, githubSecret, "the list never shows a secret")
	require.Equal(t, http.StatusCreated, site.delivers(t, id, githubSecret, 1))

	oldID := site.newestSecretID(t, id)
	rotated := shownSecret(t, admin.submit("/admin/integrations/"+id+"/secrets", url.Values{"grace_hours": {"2"}}))
	require.NotContains(t, string(admin.get("/admin/integrations").body), rotated, "shown once only")
	require.Equal(t, http.StatusCreated, site.delivers(t, id, githubSecret, 2), "the old secret works during its grace period")
	require.Equal(t, http.StatusCreated, site.delivers(t, id, rotated, 3))
	// The grace period over (moved into the past here), the old secret stops.
	_, err := site.pool.Exec(t.Context(), `UPDATE integration_secrets SET expires_at = now() - interval '1 second' WHERE id = $1`, oldID)
	require.NoError(t, err)
	require.Equal(t, http.StatusUnauthorized, site.delivers(t, id, githubSecret, 4))

	revoked := admin.submit(fmt.Sprintf("/admin/integrations/%s/secrets/%d/revoke", id, site.newestSecretID(t, id)), url.Values{})
	require.Equal(t, http.StatusSeeOther, revoked.status, "%s", revoked.body)
	require.Contains(t, string(admin.get(revoked.header.Get("Location")).body), `id="secret-revoked"`)
	require.Equal(t, http.StatusUnauthorized, site.delivers(t, id, rotated, 5), "a revoked secret stops at once")

	created := shownSecret(t, admin.submit("/admin/integrations/"+id+"/secrets", url.Values{"grace_hours": {"0"}}))
	require.Equal(t, http.StatusCreated, site.delivers(t, id, created, 6))

	for form, status := range map[string]int{"-1": http.StatusBadRequest, "721": http.StatusBadRequest, "soon": http.StatusBadRequest} {
		r := admin.submit("/admin/integrations/"+id+"/secrets", url.Values{"grace_hours": {form}})
		require.Equal(t, status, r.status, form)
		require.Contains(t, string(r.body), `id="integration-problem"`)
	}
	require.Equal(t, http.StatusCreated, site.delivers(t, id, created, 7), "refused changes changed nothing")
	require.Equal(t, 3, site.count(t, `SELECT count(*) FROM audit_events
		WHERE actor = (SELECT 'user:' || id FROM users WHERE email = 'admin@acme.example') AND details->>'integration_id' = $1
		  AND action IN ('integration.secret_added', 'integration.secret_revoked')`, id))
	var details string
	require.NoError(t, site.pool.QueryRow(t.Context(), `SELECT string_agg(details::text, ' ') FROM audit_events`).Scan(&details))
	for _, secret := range []string{githubSecret, rotated, created} {
		require.NotContains(t, details, secret, "no secret is in the audit trail")
	}
}

// A tenant's admin neither sees nor changes another tenant's integrations
// (404, as for one that does not exist), a viewer changes nothing and gets
// no form, and a form without the session's token is refused.
func TestAdminIntegrationsKeepToScopeAndRole(t *testing.T) {
	t.Parallel()
	site := newAdminSite(t)
	acme := site.integration(t, "ORDERS05", "github", githubSecret)
	globex, _ := testfactory.Integration(t, site.pool, testfactory.IntegrationOpts{Tenant: "globex", MessageType: "ORDERS05", Scheme: "github"})
	acmeSecret := site.newestSecretID(t, acme)

	other := site.client(t)
	other.login(site.user(t, "admin@globex.example", auth.RoleAdmin, "globex"))
	list := string(other.get("/admin/integrations").body)
	require.Contains(t, list, globex)
	require.NotContains(t, list, acme)
	for _, path := range []string{"/admin/integrations/" + acme + "/secrets", fmt.Sprintf("/admin/integrations/%s/secrets/%d/revoke", acme, acmeSecret),
		fmt.Sprintf("/admin/integrations/%s/secrets/%d/revoke", globex, acmeSecret)} {
		r := other.submit(path, url.Values{"grace_hours": {"0"}})
		require.Equal(t, http.StatusNotFound, r.status, path)
	}
	require.Equal(t, http.StatusCreated, site.delivers(t, acme, githubSecret, 1), "acme's secret still works")
	require.Equal(t, 2, site.count(t, `SELECT count(*) FROM integration_secrets WHERE expires_at IS NULL`), "nothing changed")

	viewer := site.client(t)
	viewer.login(site.user(t, "viewer@acme.example", auth.RoleViewer, "acme"))
	page := string(viewer.get("/admin/integrations").body)
	require.Contains(t, page, fmt.Sprintf(`id="secret-%d"`, acmeSecret))
	require.NotContains(t, page, "/revoke")
	require.NotContains(t, page, `class="new-secret`)
	require.Equal(t, http.StatusForbidden, viewer.submit(fmt.Sprintf("/admin/integrations/%s/secrets/%d/revoke", acme, acmeSecret), url.Values{}).status)
	require.Equal(t, http.StatusForbidden, viewer.submit("/admin/integrations/"+acme+"/secrets", url.Values{"grace_hours": {"0"}}).status)

	admin := site.client(t)
	admin.login(site.user(t, "admin@acme.example", auth.RoleAdmin, "acme"))
	forged := admin.post(fmt.Sprintf("/admin/integrations/%s/secrets/%d/revoke", acme, acmeSecret), url.Values{})
	require.Equal(t, http.StatusForbidden, forged.status, "no CSRF token, no change")
	require.Equal(t, http.StatusCreated, site.delivers(t, acme, githubSecret, 2))
	require.Zero(t, site.count(t, `SELECT count(*) FROM audit_events WHERE action LIKE 'integration.secret_%'`))
}

// An admin changes how far a delivery's signing time may be from edihub's
// clock for an integration of a timestamped scheme; the next delivery is
// checked against it. A scheme that signs no time has no such setting, a
// viewer sees it without a form, another tenant's admin gets 404, and a
// value out of bounds changes nothing.
func TestAdminIntegrationToleranceOverHTTP(t *testing.T) {
	t.Parallel()
	site := newAdminSite(t)
	stripe := site.integration(t, "ORDERS05", "stripe", stripeSecret)
	github := site.integration(t, "ORDERS05", "github", githubSecret)
	path := "/admin/integrations/" + stripe + "/tolerance"
	n := 0
	delivers := func(age time.Duration) int {
		n++
		body := fmt.Appendf(nil, `{"id":"evt_%d","IDOC":{"E1EDK01":{"BELNR":"%d"}}}`, n, n)
		return site.webhook(t, stripe, body, stripeHeaders(stripeSecret, body, time.Now().Add(-age))...).status
	}
	require.Equal(t, http.StatusCreated, delivers(30*time.Second), "5 minutes by default")

	admin := site.client(t)
	admin.login(site.user(t, "admin@acme.example", auth.RoleAdmin, "acme"))
	page := string(admin.get("/admin/integrations").body)
	require.Contains(t, page, `action="`+path+`"`)
	require.Contains(t, page, `name="tolerance_seconds" value="300"`)
	require.NotContains(t, page, "/admin/integrations/"+github+"/tolerance", "GitHub signs no time")

	for _, bad := range []string{"0", "3601", "soon", "1.5", ""} {
		r := admin.submit(path, url.Values{"tolerance_seconds": {bad}})
		require.Equal(t, http.StatusBadRequest, r.status, bad)
		require.Contains(t, string(r.body), `id="integration-problem"`, bad)
	}
	saved := admin.submit(path, url.Values{"tolerance_seconds": {"10"}})
	require.Equal(t, http.StatusSeeOther, saved.status, "%s", saved.body)
	page = string(admin.get(saved.header.Get("Location")).body)
	require.Contains(t, page, `class="notice tolerance-saved"`)
	require.Contains(t, page, `name="tolerance_seconds" value="10"`)
	require.Equal(t, http.StatusUnauthorized, delivers(30*time.Second), "the next delivery is checked against 10 seconds")
	require.Equal(t, http.StatusCreated, delivers(0))
	require.Equal(t, 1, site.count(t, `SELECT count(*) FROM audit_events WHERE action = 'integration.tolerance_changed'
		AND details->>'integration_id' = $1 AND details->>'before_seconds' = '300' AND details->>'after_seconds' = '10'`, stripe))

	viewer := site.client(t)
	viewer.login(site.user(t, "viewer@acme.example", auth.RoleViewer, "acme"))
	page = string(viewer.get("/admin/integrations").body)
	require.Contains(t, page, "Signing time within 10 s of edihub")
	require.NotContains(t, page, `name="tolerance_seconds"`)
	require.Equal(t, http.StatusForbidden, viewer.submit(path, url.Values{"tolerance_seconds": {"60"}}).status)

	other := site.client(t)
	other.login(site.user(t, "admin@globex.example", auth.RoleAdmin, "globex"))
	other.get("/admin/integrations")
	require.Equal(t, http.StatusNotFound, other.submit(path, url.Values{"tolerance_seconds": {"60"}}).status)
	require.Equal(t, 10, site.count(t, `SELECT signature_tolerance_seconds FROM integrations WHERE id = $1`, stripe), "refused changes changed nothing")
}
