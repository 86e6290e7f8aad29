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
)

var newKeySecret = regexp.MustCompile(`id="new-key-secret">(edh_[A-Za-z0-9_-]+)<`)

// shownKey is the key a page shows once.
func shownKey(t *testing.T, r response) string {
	t.Helper()
	require.Equal(t, http.StatusOK, r.status, "%s", r.body)
	m := newKeySecret.FindSubmatch(r.body)
	require.NotNil(t, m, "the page shows the new key: %s", r.body)
	return string(m[1])
}

// keyID is the id of the API key whose secret is key.
func (b *testBundle) keyID(t *testing.T, key string) int64 {
	t.Helper()
	var id int64
	require.NoError(t, b.pool.QueryRow(t.Context(),
		`SELECT id FROM api_keys WHERE key_hash = sha256(convert_to($1, 'UTF8'))`, key).Scan(&id))
	return id
}

// sends reports the status of a message sent with key.
func (b *testBundle) sends(t *testing.T, key string, docnum int) int {
	t.Helper()
	body := fmt.Appendf(nil, `{"message_type":"ORDERS05","docnum":"%d","payload":{"IDOC":{"E1EDK01":{"BELNR":"%d"}}}}`, docnum, docnum)
	return do(t, http.MethodPost, b.url+"/api/edi-hub/receive-message",
		http.Header{"Authorization": {"Bearer " + key}, "Content-Type": {"application/json"}}, body).status
}

// A key created on the page works; revoked, it is refused by the very next
// request; rotated, the old key works through its grace period and the new
// one at once, and a rotation without grace ends the old key at once.
func TestAdminAPIKeyRevokedAndRotatedOverHTTP(t *testing.T) {
	t.Parallel()
	site := newAdminSite(t)
	admin := site.client(t)
	admin.login(site.user(t, "admin@acme.example", auth.RoleAdmin, "acme"))

	page := admin.get("/admin/api-keys")
	require.Equal(t, http.StatusOK, page.status)
	require.Contains(t, string(page.body), `value="acme/production"`)
	require.NotContains(t, string(page.body), `value="globex/production"`)

	unnamed := admin.submit("/admin/api-keys", url.Values{"environment": {"acme/production"}, "name": {"  "}})
	require.Equal(t, http.StatusBadRequest, unnamed.status)
	require.Contains(t, string(unnamed.body), "give the key a name of 1 to 100 characters")
	key := shownKey(t, admin.submit("/admin/api-keys", url.Values{"environment": {"acme/production"}, "name": {"SAP PI <production>"}}))
	id := site.keyID(t, key)
	require.Equal(t, 1, site.count(t, `SELECT count(*) FROM api_keys WHERE id = $1 AND last_used_at IS NULL`, id))
	list := admin.get("/admin/api-keys")
	require.Contains(t, string(list.body), `SAP PI &lt;production&gt;`)
	require.Contains(t, string(list.body), `<td class="last-used">never</td>`)
	require.Equal(t, http.StatusCreated, site.sends(t, key, 1))
	require.Equal(t, 1, site.count(t, `SELECT count(*) FROM api_keys WHERE id = $1 AND last_used_at > now() - interval '1 minute'`, id),
		"a request marks its key used")
	list = admin.get("/admin/api-keys")
	require.NotContains(t, string(list.body), key, "the list never shows a key")
	require.Contains(t, string(list.body), key[:10]+"…")
	require.NotContains(t, string(list.body), `<td class="last-used">never</td>`)

	revoked := admin.submit(fmt.Sprintf("/admin/api-keys/%d/revoke", id), url.Values{})
	require.Equal(t, http.StatusSeeOther, revoked.status, "%s", revoked.body)
	require.Equal(t, http.StatusUnauthorized, site.sends(t, key, 2), "a revoked key stops working at once")
	require.Contains(t, string(admin.get(revoked.header.Get("Location")).body), `id="key-revoked"`)
	rotateRevoked := admin.submit(fmt.Sprintf("/admin/api-keys/%d/rotate", id), url.Values{"grace_hours": {"1"}})
	require.Equal(t, http.StatusConflict, rotateRevoked.status)

	old := shownKey(t, admin.submit("/admin/api-keys", url.Values{"environment": {"acme/production"}, "name": {"SAP PI"}}))
	successor := shownKey(t, admin.submit(fmt.Sprintf("/admin/api-keys/%d/rotate", site.keyID(t, old)), url.Values{"grace_hours": {"1"}}))
	require.Equal(t, http.StatusCreated, site.sends(t, old, 3), "the old key works during its grace period")
	require.Equal(t, http.StatusCreated, site.sends(t, successor, 4))
	// The grace period over (moved into the past here, by SQL, so as
	// another process would change it), the old key stops: once its cached
	// lookup expires, within API_KEY_CACHE_TTL (5 s by default) of the
	// lookup. A server that listens for changes (edihub serve) ends it as
	// the change commits; this test's server does not listen.
	_, err := site.pool.Exec(t.Context(), `UPDATE api_keys SET revoked_at = now() - interval '1 second' WHERE id = $1`, site.keyID(t, old))
	require.NoError(t, err)
	require.Eventually(t, func() bool { return site.sends(t, old, 5) == http.StatusUnauthorized },
		10*time.Second, 50*time.Millisecond)

	last := shownKey(t, admin.submit(fmt.Sprintf("/admin/api-keys/%d/rotate", site.keyID(t, successor)), url.Values{"grace_hours": {"0"}}))
	require.Equal(t, http.StatusUnauthorized, site.sends(t, successor, 6), "no grace: the old key stops at once")
	require.Equal(t, http.StatusCreated, site.sends(t, last, 7))

	for form, status := range map[string]int{"-1": http.StatusBadRequest, "721": http.StatusBadRequest, "soon": http.StatusBadRequest} {
		r := admin.submit(fmt.Sprintf("/admin/api-keys/%d/rotate", site.keyID(t, last)), url.Values{"grace_hours": {form}})
		require.Equal(t, status, r.status, form)
		require.Contains(t, string(r.body), `id="key-problem"`)
	}
	require.Equal(t, 5, site.count(t, `SELECT count(*) FROM audit_events
		WHERE actor = (SELECT 'user:' || id FROM users WHERE email = 'admin@acme.example')
		  AND action IN ('api_key.created', 'api_key.revoked', 'api_key.rotated')`))
}

// A tenant's admin neither sees nor changes another tenant's keys, a viewer
// changes nothing, and a form without the session's token is refused.
func TestAdminAPIKeysKeepToScopeAndRole(t *testing.T) {
	t.Parallel()
	site := newAdminSite(t)
	acmeKey := site.keyID(t, site.apiKey)
	other := site.client(t)
	other.login(site.user(t, "admin@globex.example", auth.RoleAdmin, "globex"))
	list := other.get("/admin/api-keys")
	require.NotContains(t, string(list.body), "acme")
	require.NotContains(t, string(list.body), fmt.Sprintf(`id="key-%d"`, acmeKey))

	for _, path := range []string{"revoke", "rotate"} {
		r := other.submit(fmt.Sprintf("/admin/api-keys/%d/%s", acmeKey, path), url.Values{"grace_hours": {"1"}})
		require.Equal(t, http.StatusNotFound, r.status, path)
	}
	r := other.submit("/admin/api-keys", url.Values{"environment": {"acme/production"}, "name": {"stolen"}})
	require.Equal(t, http.StatusForbidden, r.status)
	require.Equal(t, http.StatusCreated, site.sends(t, site.apiKey, 1), "acme's key still works")
	require.Equal(t, 2, site.count(t, `SELECT count(*) FROM api_keys`), "acme's and globex's, nothing new")

	viewer := site.client(t)
	viewer.login(site.user(t, "viewer@acme.example", auth.RoleViewer, "acme"))
	require.Contains(t, string(viewer.get("/admin/api-keys").body), fmt.Sprintf(`id="key-%d"`, acmeKey))
	require.Equal(t, http.StatusForbidden, viewer.submit(fmt.Sprintf("/admin/api-keys/%d/revoke", acmeKey), url.Values{}).status)

	admin := site.client(t)
	admin.login(site.user(t, "admin@acme.example", auth.RoleAdmin, "acme"))
	forged := admin.post(fmt.Sprintf("/admin/api-keys/%d/revoke", acmeKey), url.Values{})
	require.Equal(t, http.StatusForbidden, forged.status, "no CSRF token, no change")
	require.Equal(t, http.StatusCreated, site.sends(t, site.apiKey, 2))
}
