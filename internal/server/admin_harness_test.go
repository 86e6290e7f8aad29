package server_test

import (
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/lefia/edihub/internal/testfactory"
)

// adminSite is a running server whose tenant acme holds an ORDERS05 message
// with one duplicate blocked against it, and whose tenant globex holds the
// same, so that tests can check that one tenant's users never see the other.
type adminSite struct {
	*testBundle
	original      int64 // acme's message
	otherOriginal int64 // globex's message
}

func newAdminSite(t *testing.T) *adminSite {
	t.Helper()
	return adminSiteOn(t, setup(t))
}

// adminSiteOn fills the server of b as newAdminSite does.
func adminSiteOn(t *testing.T, b *testBundle) *adminSite {
	t.Helper()
	site := &adminSite{testBundle: b}
	b.messageType(t, "ORDERS05", []string{"*.IDOC.E1EDK01.BELNR"}, nil)
	site.original = b.originalWithDuplicate(t, b.apiKey, envelopeFor(t, "ORDERS05", "orders05.json"))

	testfactory.TenantWithEnvironment(t, b.pool, "globex")
	otherKey := testfactory.APIKey(t, b.pool, &testfactory.APIKeyOpts{Tenant: "globex"})
	testfactory.MessageType(t, b.pool, &testfactory.MessageTypeOpts{Tenant: "globex", Fields: []string{"*.IDOC.E1EDK01.BELNR"}})
	site.otherOriginal = b.originalWithDuplicate(t, otherKey, envelopeFor(t, "ORDERS05", "orders05.json"))
	return site
}

// originalWithDuplicate posts body twice with apiKey and returns the id of
// the stored message; the second post is blocked as its duplicate.
func (b *testBundle) originalWithDuplicate(t *testing.T, apiKey string, body []byte) int64 {
	t.Helper()
	h := http.Header{"Authorization": {"Bearer " + apiKey}, "Content-Type": {"application/json"}}
	first := do(t, http.MethodPost, b.url+"/api/edi-hub/receive-message", h, body)
	require.Equal(t, http.StatusCreated, first.status, "%s", first.body)
	again := do(t, http.MethodPost, b.url+"/api/edi-hub/receive-message", h, body)
	require.Equal(t, http.StatusOK, again.status, "%s", again.body)
	return int64(first.json(t)["id"].(float64))
}

// user creates a user with testfactory.Password; tenant "" makes a global
// user.
func (b *testBundle) user(t *testing.T, email, role, tenant string) string {
	t.Helper()
	return testfactory.User(t, b.pool, &testfactory.UserOpts{Email: email, Role: role, Tenant: tenant}).Email
}

// adminClient stands in for a browser on the admin pages over plain HTTP:
// it keeps cookies, does not follow redirects, and remembers the CSRF token
// of the last page it read. It sends no Sec-Fetch-Site header, so the CSRF
// token is what lets its posts through.
type adminClient struct {
	t    *testing.T
	base string
	http *http.Client
	csrf string
}

func (b *testBundle) client(t *testing.T) *adminClient {
	t.Helper()
	jar, err := cookiejar.New(nil)
	require.NoError(t, err)
	return &adminClient{t: t, base: b.url, http: &http.Client{
		Jar:           jar,
		Timeout:       30 * time.Second,
		Transport:     testClient.Transport,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}}
}

var csrfField = regexp.MustCompile(`name="_csrf" value="([^"]+)"`)

func (c *adminClient) send(req *http.Request) response {
	c.t.Helper()
	resp, err := c.http.Do(req)
	require.NoError(c.t, err)
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	require.NoError(c.t, err)
	if m := csrfField.FindSubmatch(body); m != nil {
		c.csrf = string(m[1])
	}
	return response{status: resp.StatusCode, header: resp.Header, body: body}
}

func (c *adminClient) get(path string) response {
	c.t.Helper()
	req, err := http.NewRequest(http.MethodGet, c.base+path, nil)
	require.NoError(c.t, err)
	return c.send(req)
}

// post sends form as it is: a forged request unless it holds a token.
func (c *adminClient) post(path string, form url.Values) response {
	c.t.Helper()
	req, err := http.NewRequest(http.MethodPost, c.base+path, strings.NewReader(form.Encode()))
	require.NoError(c.t, err)
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	return c.send(req)
}

// submit posts form with the CSRF token, as the page's own form does.
func (c *adminClient) submit(path string, form url.Values) response {
	c.t.Helper()
	require.NotEmpty(c.t, c.csrf, "read a page with a form first")
	form.Set("_csrf", c.csrf)
	return c.post(path, form)
}

// login signs in through the sign-in form and requires it to succeed.
func (c *adminClient) login(email string) {
	c.t.Helper()
	c.get("/admin/login")
	resp := c.submit("/admin/login", url.Values{"email": {email}, "password": {testfactory.Password}})
	require.Equal(c.t, http.StatusSeeOther, resp.status, "%s", resp.body)
	// As a browser does, follow the redirect, whose page holds the CSRF
	// token that sign-in renewed.
	c.get(resp.header.Get("Location"))
}
