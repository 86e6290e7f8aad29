package server_test

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/lefia/edihub/internal/auditevent"
	"github.com/lefia/edihub/internal/auth"
	"github.com/lefia/edihub/internal/config"
	"github.com/lefia/edihub/internal/pgtest"
	"github.com/lefia/edihub/internal/testfactory"
)

func TestAdminPagesNeedASignIn(t *testing.T) {
	t.Parallel()
	b := setup(t)
	c := b.client(t)

	resp := c.get("/admin/audit?action=message.duplicate_blocked")
	require.Equal(t, http.StatusSeeOther, resp.status)
	require.Equal(t, "/admin/login?next="+url.QueryEscape("/admin/audit?action=message.duplicate_blocked"),
		resp.header.Get("Location"))

	for _, path := range []string{"/admin", "/admin/messages/1", "/admin/users", "/admin/no-such-page"} {
		resp := c.get(path)
		require.Equal(t, http.StatusSeeOther, resp.status, path)
		require.True(t, strings.HasPrefix(resp.header.Get("Location"), "/admin/login?next="), path)
	}

	// A form post without a session cannot be replayed after signing in.
	c.get("/admin/login")
	resp = c.submit("/admin/logout", url.Values{})
	require.Equal(t, http.StatusUnauthorized, resp.status)
	require.Contains(t, string(resp.body), "sign in first")
}

func TestLoginRenewsTheSessionAndLogoutDestroysIt(t *testing.T) {
	t.Parallel()
	b := setup(t)
	email := b.user(t, "admin@acme.example", auth.RoleAdmin, "")
	c := b.client(t)

	// A token planted before sign-in (session fixation) is not the one
	// the signed-in session gets.
	base, err := url.Parse(b.url + "/admin/")
	require.NoError(t, err)
	c.http.Jar.SetCookies(base, []*http.Cookie{{Name: "edihub_session", Value: "planted-by-an-attacker", Path: "/admin"}})
	c.get("/admin/login")
	resp := c.submit("/admin/login", url.Values{"email": {email}, "password": {testfactory.Password}, "next": {"/admin/users"}})
	require.Equal(t, http.StatusSeeOther, resp.status, "%s", resp.body)
	require.Equal(t, "/admin/users", resp.header.Get("Location"))
	session := cookieNamed(t, resp, "edihub_session")
	require.NotEqual(t, "planted-by-an-attacker", session.Value)
	require.True(t, session.HttpOnly)
	require.Equal(t, http.SameSiteLaxMode, session.SameSite)
	require.Equal(t, "/admin", session.Path)
	require.False(t, session.Secure, "COOKIE_SECURE is off by default")

	// The store holds a hash of the token, never the token itself.
	require.Equal(t, 1, b.count(t, `SELECT count(*) FROM sessions`))
	require.Equal(t, 0, b.count(t, `SELECT count(*) FROM sessions WHERE token = $1`, session.Value))

	resp = c.get("/admin/audit")
	require.Equal(t, http.StatusOK, resp.status)
	require.Contains(t, string(resp.body), `id="signed-in-as">admin@acme.example<`)

	resp = c.submit("/admin/logout", url.Values{})
	require.Equal(t, http.StatusSeeOther, resp.status, "%s", resp.body)
	require.Equal(t, "/admin/login", resp.header.Get("Location"))
	require.Equal(t, 0, b.count(t, `SELECT count(*) FROM sessions`))
	require.Equal(t, http.StatusSeeOther, c.get("/admin/audit").status, "signed out")

	// A copy of the old cookie opens nothing either.
	stolen := b.client(t)
	stolen.http.Jar.SetCookies(base, []*http.Cookie{{Name: "edihub_session", Value: session.Value, Path: "/admin"}})
	require.Equal(t, http.StatusSeeOther, stolen.get("/admin/audit").status)

	for _, action := range []string{auditevent.LoggedIn, auditevent.LoggedOut} {
		require.Equal(t, 1, b.count(t, `SELECT count(*) FROM audit_events WHERE action = $1 AND actor LIKE 'user:%'`, action), action)
	}
}

func TestCookiesAreSecureWhenConfigured(t *testing.T) {
	t.Parallel()
	cfg, err := config.Load(func(k string) string { return map[string]string{"COOKIE_SECURE": "true"}[k] })
	require.NoError(t, err)
	b := setupWith(t, pgtest.Pool(t), cfg)
	email := b.user(t, "admin@acme.example", auth.RoleAdmin, "")
	c := b.client(t)
	resp := c.get("/admin/login")
	require.True(t, cookieNamed(t, resp, "edihub_signin_csrf").Secure, "the cookie holding the sign-in form's CSRF token")
	resp = c.submit("/admin/login", url.Values{"email": {email}, "password": {testfactory.Password}})
	require.Equal(t, http.StatusSeeOther, resp.status, "%s", resp.body)
	require.True(t, cookieNamed(t, resp, "edihub_session").Secure)
}

// A visitor of the sign-in page is not given a stored session: rows kept
// for hours for every anonymous request would let anyone fill the sessions
// table. The sign-in form keeps its CSRF token, in a cookie of its own,
// until sign-in gives the session one.
func TestVisitorsGetNoStoredSession(t *testing.T) {
	t.Parallel()
	b := setup(t)
	email := b.user(t, "admin@acme.example", auth.RoleAdmin, "")
	for range 50 {
		require.Equal(t, http.StatusOK, do(t, http.MethodGet, b.url+"/admin/login", nil, nil).status)
	}
	c := b.client(t)
	for _, path := range []string{"/admin/login", "/admin/audit", "/admin/login?next=/admin/users"} {
		for _, ck := range c.get(path).header.Values("Set-Cookie") {
			require.NotContains(t, ck, "edihub_session=", path)
		}
	}
	require.Zero(t, b.count(t, `SELECT count(*) FROM sessions`))

	// The sign-in form needs its token, and a token only opens the form
	// of the browser that holds its cookie.
	form := url.Values{"email": {email}, "password": {testfactory.Password}}
	require.Equal(t, http.StatusForbidden, c.post("/admin/login", form).status, "no token")
	other := b.client(t)
	other.get("/admin/login")
	require.NotEqual(t, c.csrf, other.csrf)
	form.Set("_csrf", other.csrf)
	require.Equal(t, http.StatusForbidden, c.post("/admin/login", form).status, "another browser's token")
	require.Zero(t, b.count(t, `SELECT count(*) FROM sessions`))

	resp := c.submit("/admin/login", url.Values{"email": {email}, "password": {testfactory.Password}})
	require.Equal(t, http.StatusSeeOther, resp.status, "%s", resp.body)
	require.Contains(t, resp.header.Values("Set-Cookie"), "edihub_signin_csrf=; Path=/admin; Max-Age=0; HttpOnly; SameSite=Lax",
		"the visitor's token is done with")
	require.Equal(t, 1, b.count(t, `SELECT count(*) FROM sessions`))
	c.get(resp.header.Get("Location"))
	require.Equal(t, http.StatusSeeOther, c.submit("/admin/users", url.Values{"email": {"new@acme.example"}, "password": {testfactory.Password}, "role": {"viewer"}}).status)
}

func TestLoginRefusesWrongCredentialsAndThrottles(t *testing.T) {
	t.Parallel()
	b := setup(t)
	email := b.user(t, "viewer@acme.example", auth.RoleViewer, "acme")
	c := b.client(t)
	c.get("/admin/login")

	attempt := func(c *adminClient, email, password, addr string) response {
		t.Helper()
		form := url.Values{"email": {email}, "password": {password}, "_csrf": {c.csrf}}
		req, err := http.NewRequest(http.MethodPost, b.url+"/admin/login", strings.NewReader(form.Encode()))
		require.NoError(t, err)
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		req.Header.Set("X-Forwarded-For", addr)
		return c.send(req)
	}

	// Unknown email and wrong password get the same answer.
	unknown := attempt(c, "nobody@acme.example", testfactory.Password, "192.0.2.1")
	wrong := attempt(c, email, "not the password", "192.0.2.2")
	for _, resp := range []response{unknown, wrong} {
		require.Equal(t, http.StatusUnauthorized, resp.status)
		require.Contains(t, string(resp.body), "the email or the password is not right")
		require.Contains(t, string(resp.body), `value="`) // the form is shown again
	}
	require.Equal(t, 2, b.count(t, `SELECT count(*) FROM audit_events WHERE action = 'user.login_failed' AND tenant_id IS NULL`))

	// Five failures for one email lock that email out, whatever the address.
	for i := 0; i < auth.MaxFailures-1; i++ {
		attempt(c, strings.ToUpper(email), "still not it", fmt.Sprintf("198.51.100.%d", i))
	}
	resp := attempt(c, email, testfactory.Password, "203.0.113.9")
	require.Equal(t, http.StatusTooManyRequests, resp.status)
	require.Contains(t, string(resp.body), "too many failed sign-ins")

	// Five failures from one address lock that address out for any email.
	other := b.user(t, "admin@acme.example", auth.RoleAdmin, "")
	for i := 0; i < auth.MaxFailures; i++ {
		attempt(c, fmt.Sprintf("guess%d@acme.example", i), "guess", "203.0.113.50")
	}
	require.Equal(t, http.StatusTooManyRequests, attempt(c, other, testfactory.Password, "203.0.113.50").status)
	resp = attempt(c, other, testfactory.Password, "203.0.113.51")
	require.Equal(t, http.StatusSeeOther, resp.status, "%s", resp.body)

	// Refused attempts are not recorded, so waiting out the window works.
	require.Equal(t, 2+auth.MaxFailures-1+auth.MaxFailures,
		b.count(t, `SELECT count(*) FROM audit_events WHERE action = 'user.login_failed'`))
}

func TestFormsNeedTheCSRFToken(t *testing.T) {
	t.Parallel()
	b := setup(t)
	c := b.client(t)
	c.login(b.user(t, "admin@acme.example", auth.RoleAdmin, ""))
	c.get("/admin/users")

	newUser := url.Values{"email": {"new@acme.example"}, "password": {testfactory.Password}, "role": {"viewer"}}
	for name, token := range map[string]string{"no token": "", "wrong token": "forged"} {
		form := url.Values{}
		for k, v := range newUser {
			form[k] = v
		}
		if token != "" {
			form.Set("_csrf", token)
		}
		resp := c.post("/admin/users", form)
		require.Equal(t, http.StatusForbidden, resp.status, name)
		require.Contains(t, string(resp.body), "did not come from edihub", name)
		require.Equal(t, "text/html; charset=UTF-8", resp.header.Get("Content-Type"), name)
	}
	// A cross-site post from a current browser is refused by its
	// Sec-Fetch-Site header too, token or not.
	req, err := http.NewRequest(http.MethodPost, b.url+"/admin/users",
		strings.NewReader(url.Values{"_csrf": {c.csrf}, "email": {"x@acme.example"}}.Encode()))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Sec-Fetch-Site", "cross-site")
	require.Equal(t, http.StatusForbidden, c.send(req).status)
	require.Equal(t, 1, b.count(t, `SELECT count(*) FROM users`), "nothing was created")

	// The same form with the page's token goes through.
	resp := c.submit("/admin/users", newUser)
	require.Equal(t, http.StatusSeeOther, resp.status, "%s", resp.body)
	require.Equal(t, 2, b.count(t, `SELECT count(*) FROM users`))
}

// A CSRF token is bound to its session: a token and the cookies that an
// attacker obtained in a session of their own, planted in a signed-in
// admin's browser, do not let a forged form through. With a token checked
// against a cookie (double submit), this pair passed.
func TestPlantedCSRFTokenAndCookiesAreRefused(t *testing.T) {
	t.Parallel()
	b := setup(t)
	victim := b.client(t)
	victim.login(b.user(t, "admin@acme.example", auth.RoleAdmin, ""))

	attacker := b.client(t)
	attacker.get("/admin/login")
	require.NotEmpty(t, attacker.csrf)
	site, err := url.Parse(b.url + "/admin/")
	require.NoError(t, err)
	for _, ck := range attacker.http.Jar.Cookies(site) {
		if ck.Name != "edihub_session" {
			victim.http.Jar.SetCookies(site, []*http.Cookie{{Name: ck.Name, Value: ck.Value, Path: "/admin"}})
		}
	}
	victim.csrf = attacker.csrf
	resp := victim.submit("/admin/users", url.Values{"email": {"mallory@evil.example"}, "password": {testfactory.Password}, "role": {"admin"}})
	require.Equal(t, http.StatusForbidden, resp.status, "%s", resp.body)
	require.Zero(t, b.count(t, `SELECT count(*) FROM users WHERE email = 'mallory@evil.example'`))

	// The token of the victim's own session still works.
	victim.get("/admin/users")
	resp = victim.submit("/admin/users", url.Values{"email": {"new@acme.example"}, "password": {testfactory.Password}, "role": {"viewer"}})
	require.Equal(t, http.StatusSeeOther, resp.status, "%s", resp.body)
}

// Email addresses are unique across the hub, since a sign-in names no
// tenant. A tenant's admin who picks an address another tenant's user holds
// gets the same answer as for an address of their own tenant, naming
// neither the holder nor its tenant, and nothing is created.
func TestEmailConflictsRevealNothingOutsideTheTenant(t *testing.T) {
	t.Parallel()
	b := setup(t)
	testfactory.Tenant(t, b.pool, &testfactory.TenantOpts{Slug: "globex", Name: "Globex"})
	b.user(t, "ceo@globex.example", auth.RoleAdmin, "globex")
	b.user(t, "clerk@acme.example", auth.RoleViewer, "acme")
	c := b.client(t)
	c.login(b.user(t, "boss@acme.example", auth.RoleAdmin, "acme"))

	var answers []string
	for _, email := range []string{"ceo@globex.example", "CEO@globex.example", "clerk@acme.example"} {
		c.get("/admin/users")
		resp := c.submit("/admin/users", url.Values{"email": {email}, "password": {testfactory.Password}, "role": {"admin"}})
		require.Equal(t, http.StatusConflict, resp.status, "%s", resp.body)
		problem := problemOf(t, string(resp.body))
		require.Contains(t, problem, "this email address cannot be given to a new user")
		require.NotContains(t, problem, "exists")
		require.NotContains(t, problem, "globex")
		answers = append(answers, problem)
	}
	require.Equal(t, answers[0], answers[2], "another tenant's address and one's own get the same answer")
	require.Equal(t, 1, b.count(t, `SELECT count(*) FROM users WHERE lower(email) = 'ceo@globex.example'`))
	require.Equal(t, 3, b.count(t, `SELECT count(*) FROM users`))
}

// problemOf returns the problem shown on a page.
func problemOf(t *testing.T, page string) string {
	t.Helper()
	m := regexp.MustCompile(`class="problem"[^>]*>([^<]*)<`).FindStringSubmatch(page)
	require.NotNil(t, m, "the page shows a problem: %s", page)
	return m[1]
}

func TestViewersCannotChangeAnything(t *testing.T) {
	t.Parallel()
	b := setup(t)
	c := b.client(t)
	c.login(b.user(t, "viewer@acme.example", auth.RoleViewer, ""))

	resp := c.get("/admin/users")
	require.Equal(t, http.StatusOK, resp.status)
	require.Contains(t, string(resp.body), "viewer@acme.example")
	require.NotContains(t, string(resp.body), `action="/admin/users"`, "a viewer gets no form")

	// A forged post with a valid session and token is still refused.
	resp = c.submit("/admin/users", url.Values{
		"email": {"sneaky@acme.example"}, "password": {testfactory.Password}, "role": {"admin"},
	})
	require.Equal(t, http.StatusForbidden, resp.status)
	require.Contains(t, string(resp.body), "needs the admin role")
	require.Equal(t, 1, b.count(t, `SELECT count(*) FROM users`))
}

func TestAdminsCreateUsersInTheirOwnScope(t *testing.T) {
	t.Parallel()
	b := setup(t)
	testfactory.Tenant(t, b.pool, &testfactory.TenantOpts{Slug: "globex", Name: "Globex"})
	c := b.client(t)
	c.login(b.user(t, "boss@acme.example", auth.RoleAdmin, "acme"))

	resp := c.get("/admin/users")
	require.Contains(t, string(resp.body), `action="/admin/users"`)
	require.NotContains(t, string(resp.body), `name="tenant"`, "a tenant's admin picks no tenant")

	resp = c.submit("/admin/users", url.Values{
		"email": {"clerk@acme.example"}, "password": {testfactory.Password}, "role": {"viewer"},
	})
	require.Equal(t, http.StatusSeeOther, resp.status, "%s", resp.body)
	require.Equal(t, "/admin/users?created=clerk%40acme.example", resp.header.Get("Location"))
	require.Contains(t, string(c.get(resp.header.Get("Location")).body), "Created clerk@acme.example.")
	require.Equal(t, 1, b.count(t, `SELECT count(*) FROM users u JOIN tenants t ON t.id = u.tenant_id
		WHERE u.email = 'clerk@acme.example' AND t.slug = 'acme' AND u.role = 'viewer'`))
	require.Equal(t, 1, b.count(t, `SELECT count(*) FROM audit_events
		WHERE action = 'user.created' AND actor LIKE 'user:%' AND details->>'email' = 'clerk@acme.example'`))

	resp = c.submit("/admin/users", url.Values{
		"email": {"spy@acme.example"}, "password": {testfactory.Password}, "role": {"admin"}, "tenant": {"globex"},
	})
	require.Equal(t, http.StatusForbidden, resp.status)
	require.Contains(t, string(resp.body), `tenant &#34;acme&#34; only`)

	// Validation problems are shown beside the form.
	c.get("/admin/users")
	resp = c.submit("/admin/users", url.Values{"email": {"short@acme.example"}, "password": {"short"}, "role": {"viewer"}})
	require.Equal(t, http.StatusBadRequest, resp.status)
	require.Contains(t, string(resp.body), "password too short")
	require.Contains(t, string(resp.body), `value="short@acme.example"`)
	require.Equal(t, 2, b.count(t, `SELECT count(*) FROM users`))

	// The list shows the tenant's users only.
	b.user(t, "global@acme.example", auth.RoleAdmin, "")
	require.NotContains(t, string(c.get("/admin/users").body), "global@acme.example")
}

func TestTenantUsersSeeOnlyTheirTenant(t *testing.T) {
	t.Parallel()
	site := newAdminSite(t)
	// A failed sign-in is an event outside any tenant.
	failed := site.client(t)
	failed.get("/admin/login")
	failed.submit("/admin/login", url.Values{"email": {"who@example.com"}, "password": {"guess"}})
	c := site.client(t)
	c.login(site.user(t, "viewer@globex.example", auth.RoleViewer, "globex"))

	// The other tenant's message is missing, exactly like one that does
	// not exist, so its existence is not revealed.
	own := c.get(fmt.Sprintf("/admin/messages/%d", site.otherOriginal))
	require.Equal(t, http.StatusOK, own.status, "%s", own.body)
	other := c.get(fmt.Sprintf("/admin/messages/%d", site.original))
	require.Equal(t, http.StatusNotFound, other.status)
	require.Contains(t, string(other.body), fmt.Sprintf("there is no message %d", site.original))

	// The audit log lists the tenant's own events only, whatever the URL asks.
	audit := string(c.get("/admin/audit").body)
	require.Contains(t, audit, fmt.Sprintf(`href="/admin/messages/%d"`, site.otherOriginal))
	require.NotContains(t, audit, fmt.Sprintf(`href="/admin/messages/%d"`, site.original))
	require.NotContains(t, audit, `data-action="user.login_failed"`)
	for _, query := range []string{"?tenant=acme", fmt.Sprintf("?message=%d", site.original), "?tenant=acme&environment=production"} {
		body := string(c.get("/admin/audit" + query).body)
		require.NotContains(t, body, fmt.Sprintf(`href="/admin/messages/%d"`, site.original), query)
	}
	require.Contains(t, string(c.get("/admin/audit?tenant=acme").body), "there is no tenant &#34;acme&#34;")

	// A global user sees both tenants.
	g := site.client(t)
	g.login(site.user(t, "auditor@example.com", auth.RoleViewer, ""))
	audit = string(g.get("/admin/audit").body)
	require.Contains(t, audit, fmt.Sprintf(`href="/admin/messages/%d"`, site.otherOriginal))
	require.Contains(t, audit, fmt.Sprintf(`href="/admin/messages/%d"`, site.original))
	require.Contains(t, audit, `data-action="user.login_failed"`)
}

func TestAdminErrorsArePages(t *testing.T) {
	t.Parallel()
	b := setup(t)
	c := b.client(t)
	c.login(b.user(t, "admin@acme.example", auth.RoleAdmin, ""))

	for _, path := range []string{"/admin/messages/424242", "/admin/messages/not-a-number", "/admin/no-such-page"} {
		resp := c.get(path)
		require.Equal(t, http.StatusNotFound, resp.status, path)
		require.Equal(t, "text/html; charset=UTF-8", resp.header.Get("Content-Type"), path)
		require.Contains(t, string(resp.body), `<a id="error-back" href="/admin">Back to the dashboard</a>`, path)
		require.NotContains(t, string(resp.body), `<p id="error-detail">Not Found</p>`, "the page says more than its title: %s", path)
	}
	resp := c.get("/admin/no-such-page")
	require.Contains(t, string(resp.body), "<title>Page not found · edihub</title>")
	require.Contains(t, string(resp.body), "There is no page at /admin/no-such-page.")

	// A browser on a mistyped address outside the admin pages gets a page
	// too, leading home; an API client still gets a problem document.
	browser := do(t, http.MethodGet, b.url+"/adminn", http.Header{"Accept": {"text/html,application/xhtml+xml"}}, nil)
	require.Equal(t, http.StatusNotFound, browser.status)
	require.Equal(t, "text/html; charset=UTF-8", browser.header.Get("Content-Type"))
	require.Contains(t, string(browser.body), `<a id="error-back" href="/">Back to the home page</a>`)
	api := do(t, http.MethodGet, b.url+"/api/edi-hub/nothing", http.Header{"Accept": {"text/html"}}, nil)
	require.Equal(t, "application/problem+json", api.header.Get("Content-Type"))
	// A bad page link is explained beside the filter, not an error page.
	resp = c.get("/admin/audit?before=garbage&from=yesterday")
	require.Equal(t, http.StatusOK, resp.status)
	require.Contains(t, string(resp.body), "the page link is not valid")
	require.Contains(t, string(resp.body), "&#34;yesterday&#34; is not a time")
}

func TestSignInRedirectsOnlyWithinTheAdminPages(t *testing.T) {
	t.Parallel()
	b := setup(t)
	email := b.user(t, "admin@acme.example", auth.RoleAdmin, "")
	for next, want := range map[string]string{
		"/admin/messages/7?x=1":      "/admin/messages/7?x=1",
		"/admin":                     "/admin",
		"https://evil.example/admin": "/admin",
		"//evil.example/admin":       "/admin",
		`/\evil.example`:             "/admin",
		"/api/edi-hub":               "/admin",
		"/administrator":             "/admin",
		"":                           "/admin",
	} {
		c := b.client(t)
		c.get("/admin/login?next=" + url.QueryEscape(next))
		resp := c.submit("/admin/login", url.Values{"email": {email}, "password": {testfactory.Password}, "next": {next}})
		require.Equal(t, http.StatusSeeOther, resp.status, next)
		require.Equal(t, want, resp.header.Get("Location"), next)
	}
}

func TestPagesSendSecurityHeaders(t *testing.T) {
	t.Parallel()
	b := setup(t)
	for _, path := range []string{"/", "/admin/login"} {
		resp := b.client(t).get(path)
		require.Equal(t, http.StatusOK, resp.status, path)
		csp := resp.header.Get("Content-Security-Policy")
		require.Contains(t, csp, "script-src 'self'", path)
		require.Contains(t, csp, "frame-ancestors 'none'", path)
		require.NotContains(t, csp, "unsafe-inline", path)
		require.Equal(t, "nosniff", resp.header.Get("X-Content-Type-Options"), path)
		require.Equal(t, "DENY", resp.header.Get("X-Frame-Options"), path)
		require.Equal(t, "same-origin", resp.header.Get("Referrer-Policy"), path)
	}
	require.Equal(t, "no-store", b.client(t).get("/admin/login").header.Get("Cache-Control"))
}

func cookieNamed(t *testing.T, resp response, name string) *http.Cookie {
	t.Helper()
	for _, line := range resp.header.Values("Set-Cookie") {
		c, err := http.ParseSetCookie(line)
		require.NoError(t, err)
		if c.Name == name && c.Value != "" {
			return c
		}
	}
	require.Failf(t, "no cookie", "%s in %v", name, resp.header.Values("Set-Cookie"))
	return nil
}

func TestAuditPagesOlderEventsWithTheFilterKept(t *testing.T) {
	t.Parallel()
	b := setup(t)
	c := b.client(t)
	c.login(b.user(t, "admin@acme.example", auth.RoleAdmin, ""))
	_, err := b.pool.Exec(context.Background(), `INSERT INTO audit_events (action, actor, details, created_at)
		SELECT 'user.login_failed', 'anonymous', jsonb_build_object('email', 'guess' || g || '@acme.example'),
		       now() - make_interval(mins => g)
		FROM generate_series(1, 60) g`)
	require.NoError(t, err)

	first := string(c.get("/admin/audit?action=user.login_failed").body)
	require.Equal(t, 50, strings.Count(first, `<tr class="event"`))
	require.Contains(t, first, "guess1@acme.example")
	older := olderLink.FindStringSubmatch(first)
	require.NotNil(t, older, "a link to older events")
	require.Contains(t, older[1], "action=user.login_failed")

	second := string(c.get(strings.ReplaceAll(older[1], "&amp;", "&")).body)
	require.Equal(t, 10, strings.Count(second, `<tr class="event"`))
	require.Contains(t, second, "guess60@acme.example")
	require.NotContains(t, second, `id="older"`, "the last page")
	require.Regexp(t, `<a href="/admin/audit\?action=user.login_failed"[^>]*>Newest events</a>`, second)

	// htmx gets the URL to show without the form's empty fields.
	req, err := http.NewRequest(http.MethodGet, b.url+"/admin/audit?action=user.login_failed&tenant=&key=", nil)
	require.NoError(t, err)
	req.Header.Set("HX-Request", "true")
	require.Equal(t, "/admin/audit?action=user.login_failed", c.send(req).header.Get("HX-Push-Url"))
}

var olderLink = regexp.MustCompile(`href="(/admin/audit\?[^"]+)" id="older"`)

func TestMessagePageExplainsTheBusinessKey(t *testing.T) {
	t.Parallel()
	site := newAdminSite(t)
	c := site.client(t)
	c.login(site.user(t, "viewer@acme.example", auth.RoleViewer, "acme"))
	path := fmt.Sprintf("/admin/messages/%d", site.original)

	page := string(c.get(path).body)
	require.Contains(t, page, `<mark title="*.IDOC.E1EDK01.BELNR">&#34;4500012345&#34;</mark>`)
	require.Contains(t, page, "The fingerprint is made of the values at these paths")
	require.Contains(t, page, "Retransmissions with this fingerprint are matched against this message.")
	require.NotContains(t, page, `id="config-changed"`)
	require.Equal(t, 1, strings.Count(page, `<tr class="event" data-action="message.duplicate_blocked"`))

	_, err := site.pool.Exec(context.Background(),
		`UPDATE message_types SET duplicate_key_fields = '["*.IDOC.E1EDK01.CURCY"]' WHERE code = 'ORDERS05'`)
	require.NoError(t, err)
	page = string(c.get(path).body)
	require.Contains(t, page, `id="config-changed"`)
	require.Contains(t, page, `<mark title="*.IDOC.E1EDK01.CURCY">`)
}
