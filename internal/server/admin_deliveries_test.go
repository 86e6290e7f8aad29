package server_test

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/lefia/edihub/internal/auth"
	"github.com/lefia/edihub/internal/provision"
)

// A tenant's admin sees and changes only the tenant's destinations and
// deliveries: another tenant's are missing from every list and answer
// every change as if they did not exist, and a bulk replay queues none of
// them.
func TestTenantAdminsNeverSeeOrChangeAnotherTenantsDeliveries(t *testing.T) {
	t.Parallel()
	site := newDeliverySite(t)
	c := site.client(t)
	c.login(site.user(t, "admin@acme.example", auth.RoleAdmin, "acme"))

	for _, path := range []string{"/admin/destinations", "/admin/deliveries", "/admin/deliveries?status=failed",
		fmt.Sprintf("/admin/deliveries?destination=%d", site.globexDest)} {
		resp := c.get(path)
		require.Equal(t, http.StatusOK, resp.status, path)
		require.NotContains(t, string(resp.body), site.globexURL, path)
		require.NotContains(t, string(resp.body), fmt.Sprintf(`href="/admin/messages/%d"`, site.globexMessage), path)
	}
	require.Contains(t, string(c.get("/admin/destinations").body), site.receiverURL+"/acme")
	require.Len(t, regexp.MustCompile(`<tr class="delivery"`).FindAll(c.get("/admin/deliveries").body, -1), 3)

	other := strconv.FormatInt(site.globexDest, 10)
	require.Equal(t, http.StatusNotFound, c.get("/admin/destinations/"+other).status)
	c.get("/admin/destinations")
	for path, form := range map[string]url.Values{
		"/admin/destinations/" + other:             {"url": {"https://93.184.215.14/stolen"}, "max_concurrency": {"1"}},
		"/admin/destinations/" + other + "/pause":  {},
		"/admin/destinations/" + other + "/resume": {},
		"/admin/destinations/" + other + "/delete": {},
	} {
		resp := c.submit(path, form)
		require.Equal(t, http.StatusNotFound, resp.status, "%s: %s", path, resp.body)
	}
	require.Equal(t, 1, site.count(t, `SELECT count(*) FROM destinations WHERE id = $1 AND url = $2 AND NOT paused AND max_concurrency = $3 AND deleted_at IS NULL`,
		site.globexDest, site.globexURL, provision.DefaultMaxConcurrency), "globex's destination is unchanged")

	resp := c.submit(fmt.Sprintf("/admin/deliveries/%d/retry", site.globexDelivery), url.Values{})
	require.Equal(t, http.StatusConflict, resp.status, "%s", resp.body)
	require.Contains(t, string(resp.body), "is not a failed delivery you can retry")
	resp = c.submit(fmt.Sprintf("/admin/deliveries/%d/retry-now", site.globexDelivery), url.Values{})
	require.Equal(t, http.StatusNotFound, resp.status, "%s", resp.body)
	require.Equal(t, http.StatusNotFound, c.get("/admin/destinations/"+other+"/delete").status)

	// A bulk replay of every failed delivery, the admin's filter naming
	// globex's destination or none, queues acme's only.
	site.up.Store(true)
	c.get("/admin/deliveries")
	resp = c.submit("/admin/deliveries/retry", url.Values{"destination": {other}})
	require.Equal(t, http.StatusSeeOther, resp.status, "%s", resp.body)
	resp = c.submit("/admin/deliveries/retry", url.Values{"status": {"failed"}})
	require.Equal(t, http.StatusSeeOther, resp.status, "%s", resp.body)
	location := resp.header.Get("Location")
	require.Regexp(t, `^/admin/deliveries\?replay=\d+&status=failed$`, location)
	require.Eventually(t, func() bool {
		return strings.Contains(string(c.get(location).body), "queued 3 failed deliveries")
	}, 30*time.Second, 100*time.Millisecond)
	site.waitSettled(t)
	require.Equal(t, int64(3), site.received.Load())
	require.Equal(t, 1, site.count(t, `SELECT count(*) FROM deliveries WHERE id = $1 AND status = 'failed' AND attempts = 2`, site.globexDelivery))

	// Another tenant's admin cannot follow acme's replay.
	g := site.client(t)
	g.login(site.user(t, "admin@globex.example", auth.RoleAdmin, "globex"))
	body := string(g.get(location).body)
	require.NotContains(t, body, "queued 3")
	require.Contains(t, body, "does not exist")
}

// Viewers read the destinations and deliveries and change nothing: no
// form is shown to them, and a forged one with a valid token is refused.
func TestViewersCannotChangeDestinationsOrDeliveries(t *testing.T) {
	t.Parallel()
	site := newDeliverySite(t)
	c := site.client(t)
	c.login(site.user(t, "viewer@acme.example", auth.RoleViewer, ""))
	for _, path := range []string{"/admin/destinations", "/admin/deliveries", fmt.Sprintf("/admin/messages/%d", site.messages[0])} {
		resp := c.get(path)
		require.Equal(t, http.StatusOK, resp.status, path)
		require.NotRegexp(t, `<form method="post" action="/admin/(destinations|deliveries)`, string(resp.body), path)
	}
	require.Contains(t, string(c.get("/admin/destinations").body), site.globexURL, "a global viewer sees every tenant")
	require.Equal(t, http.StatusForbidden, c.get("/admin/destinations/new").status)
	require.Equal(t, http.StatusForbidden, c.get(fmt.Sprintf("/admin/destinations/%d", site.acmeDest)).status)

	for path, form := range changingForms(site) {
		resp := c.submit(path, form)
		require.Equal(t, http.StatusForbidden, resp.status, path)
		require.Contains(t, string(resp.body), "needs the admin role", path)
	}
	requireNothingChanged(t, site)
}

// Every form of the delivery pages needs the session's CSRF token.
func TestDeliveryFormsNeedTheCSRFToken(t *testing.T) {
	t.Parallel()
	site := newDeliverySite(t)
	c := site.client(t)
	c.login(site.user(t, "admin@acme.example", auth.RoleAdmin, ""))
	for path, form := range changingForms(site) {
		resp := c.post(path, form)
		require.Equal(t, http.StatusForbidden, resp.status, path)
		require.Contains(t, string(resp.body), "did not come from edihub", path)
	}
	requireNothingChanged(t, site)
}

// changingForms are a valid post of every form that changes destinations
// or deliveries.
func changingForms(site *deliverySite) map[string]url.Values {
	dest := strconv.FormatInt(site.acmeDest, 10)
	return map[string]url.Values{
		"/admin/destinations":                                              {"place": {"acme/production"}, "url": {"https://93.184.215.14/new"}, "max_concurrency": {"4"}},
		"/admin/destinations/" + dest:                                      {"url": {"https://93.184.215.14/changed"}, "max_concurrency": {"2"}},
		"/admin/destinations/" + dest + "/pause":                           {},
		"/admin/deliveries/retry":                                          {"status": {"failed"}},
		fmt.Sprintf("/admin/deliveries/%d/retry", site.globexDelivery):     {},
		fmt.Sprintf("/admin/deliveries/%d/retry-now", site.globexDelivery): {},
		"/admin/destinations/" + dest + "/delete":                          {},
	}
}

func requireNothingChanged(t *testing.T, site *deliverySite) {
	t.Helper()
	require.Equal(t, 2, site.count(t, `SELECT count(*) FROM destinations WHERE NOT paused AND deleted_at IS NULL AND url LIKE 'http://127.0.0.1:%'`))
	require.Equal(t, 4, site.count(t, `SELECT count(*) FROM deliveries WHERE status = 'failed'`))
	require.Zero(t, site.count(t, `SELECT count(*) FROM river_job WHERE kind = 'delivery_replay'`))
}

// A destination URL on loopback, a private network or the metadata address
// is refused at creation with a form error; an allowed one is created, and
// its signing secret is shown on that answer only.
// Text a tenant's admin or a receiver chose, stored before the rules that
// refuse or escape it (a destination URL, an attempt's error and answer),
// shows its right-to-left overrides and escape sequences as escapes on
// every page that shows it, so that it cannot reorder or hide the text
// around it.
func TestDestinationURLsAndAnswersShowHiddenCharactersAsEscapes(t *testing.T) {
	t.Parallel()
	site := newDeliverySite(t)
	_, err := site.pool.Exec(context.Background(), `UPDATE destinations SET url = url || '/'||chr(8238)||'exe.txt' WHERE id = $1`, site.acmeDest)
	require.NoError(t, err)
	_, err = site.pool.Exec(context.Background(), `UPDATE delivery_attempts
		SET error = 'answered 502 '||chr(8238)||'yawetaG', response_snippet = chr(27)||'[2J'||chr(8238)||'down'`)
	require.NoError(t, err)
	c := site.client(t)
	c.login(site.user(t, "admin@acme.example", auth.RoleAdmin, "acme"))

	for _, path := range []string{
		"/admin/destinations", fmt.Sprintf("/admin/destinations/%d", site.acmeDest), "/admin/deliveries",
		fmt.Sprintf("/admin/deliveries?destination=%d", site.acmeDest), fmt.Sprintf("/admin/messages/%d", site.messages[0]),
	} {
		page := string(c.get(path).body)
		require.NotContains(t, page, "\u202e", path)
		require.NotContains(t, page, "\x1b", path)
		require.Contains(t, page, `/\u202eexe.txt`, path)
	}
	page := string(c.get(fmt.Sprintf("/admin/messages/%d", site.messages[0])).body)
	require.Contains(t, page, `answered 502 \u202eyawetaG`)
	require.Contains(t, page, `\x1b[2J\u202edown`)
	require.Contains(t, string(c.get("/admin/deliveries").body), `answered 502 \u202eyawetaG`)
}

// A URL's scheme and host are case-insensitive: HTTP:// is kept as
// http://, which the destinations table requires, rather than failing its
// check with a 500. A URL that cannot be kept as it is (a hidden character,
// too long) is explained on the form, created or edited.
func TestDestinationURLsAreKeptInLowerCaseOrExplained(t *testing.T) {
	t.Parallel()
	b := setup(t)
	c := b.client(t)
	c.login(b.user(t, "admin@acme.example", auth.RoleAdmin, "acme"))
	c.get("/admin/destinations/new")
	resp := c.submit("/admin/destinations", url.Values{"place": {"acme/production"}, "url": {"HTTPS://93.184.215.14/Edihub"}, "max_concurrency": {"4"}})
	require.Equal(t, http.StatusCreated, resp.status, "%s", resp.body)
	var id int64
	require.NoError(t, b.pool.QueryRow(context.Background(), `SELECT id FROM destinations WHERE url = 'https://93.184.215.14/Edihub'`).Scan(&id))

	edit := fmt.Sprintf("/admin/destinations/%d", id)
	c.get(edit)
	resp = c.submit(edit, url.Values{"url": {"HTTP://93.184.215.14/Other"}, "max_concurrency": {"4"}})
	require.Equal(t, http.StatusSeeOther, resp.status, "%s", resp.body)
	require.Equal(t, 1, b.count(t, `SELECT count(*) FROM destinations WHERE url = 'http://93.184.215.14/Other'`))

	for u, reason := range map[string]string{
		"https://93.184.215.14/\u202egnp.exe":                "printable ASCII characters only",
		"https://93.184.215.14/" + strings.Repeat("a", 3000): "more than the 2048 allowed",
	} {
		c.get(edit)
		resp := c.submit(edit, url.Values{"url": {u}, "max_concurrency": {"4"}})
		require.Equal(t, http.StatusBadRequest, resp.status, u)
		require.Contains(t, problemOf(t, string(resp.body)), reason, u)
		c.get("/admin/destinations/new")
		resp = c.submit("/admin/destinations", url.Values{"place": {"acme/production"}, "url": {u}, "max_concurrency": {"4"}})
		require.Equal(t, http.StatusBadRequest, resp.status, u)
	}
	require.Equal(t, 1, b.count(t, `SELECT count(*) FROM destinations`))
}

func TestDestinationCreationRefusesPrivateAddressesAndShowsTheSecretOnce(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.messageType(t, "ORDERS05", nil, nil)
	c := b.client(t)
	c.login(b.user(t, "admin@acme.example", auth.RoleAdmin, "acme"))
	require.Contains(t, string(c.get("/admin/destinations/new").body), `<option value="acme/production">acme / production</option>`)

	for u, reason := range map[string]string{
		"http://127.0.0.1:8080/hook":               "loopback",
		"http://10.1.2.3/hook":                     "private",
		"http://169.254.169.254/latest/meta-data/": "link-local",
		"http://[::1]/hook":                        "loopback",
	} {
		resp := c.submit("/admin/destinations", url.Values{"place": {"acme/production"}, "url": {u}, "max_concurrency": {"4"}})
		require.Equal(t, http.StatusBadRequest, resp.status, u)
		problem := problemOf(t, string(resp.body))
		require.Contains(t, problem, reason, u)
		require.Contains(t, problem, "DESTINATION_ALLOWED_CIDRS", u)
		require.Contains(t, string(resp.body), fmt.Sprintf(`value="%s"`, u), "the form keeps what was typed")
	}
	for form, problem := range map[string]string{
		"place=globex%2Fproduction&url=https%3A%2F%2F93.184.215.14%2F&max_concurrency=4":                  `choose one of the environments listed, not &#34;globex/production&#34;`,
		"place=acme%2Fproduction&url=https%3A%2F%2F93.184.215.14%2F&max_concurrency=0":                    "the concurrency limit must be from 1 to 100",
		"place=acme%2Fproduction&url=https%3A%2F%2F93.184.215.14%2F&max_concurrency=4&message_types=NOPE": `message type &#34;NOPE&#34; does not exist`,
	} {
		values, err := url.ParseQuery(form)
		require.NoError(t, err)
		resp := c.submit("/admin/destinations", values)
		require.Contains(t, []int{http.StatusBadRequest, http.StatusNotFound}, resp.status, form)
		require.Contains(t, string(resp.body), problem, form)
	}
	require.Zero(t, b.count(t, `SELECT count(*) FROM destinations`))

	resp := c.submit("/admin/destinations", url.Values{
		"place": {"acme/production"}, "url": {"https://93.184.215.14/edihub"}, "message_types": {"ORDERS05"}, "max_concurrency": {"3"},
	})
	require.Equal(t, http.StatusCreated, resp.status, "%s", resp.body)
	secret := regexp.MustCompile(`whsec_[A-Za-z0-9+/=]+`).FindString(string(resp.body))
	require.NotEmpty(t, secret)
	require.Equal(t, 1, b.count(t, `SELECT count(*) FROM destinations
		WHERE secret = $1 AND url = 'https://93.184.215.14/edihub' AND max_concurrency = 3 AND cardinality(message_type_ids) = 1`, secret))
	require.Equal(t, 1, b.count(t, `SELECT count(*) FROM audit_events WHERE action = 'destination.created' AND actor LIKE 'user:%'`))
	for _, path := range []string{"/admin/destinations", "/admin/destinations/1", "/admin/audit"} {
		require.NotContains(t, string(c.get(path).body), secret, path)
	}
}
