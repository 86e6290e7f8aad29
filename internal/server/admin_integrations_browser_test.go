package server_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/require"

	"github.com/lefia/edihub/internal/auth"
	"github.com/lefia/edihub/internal/testfactory"
)

// An admin rotates an integration's secret and sees the new one once, then
// revokes the old one, in the browser; another tenant's admin sees none of
// it.
func TestBrowserAdminManagesIntegrationSecrets(t *testing.T) {
	t.Parallel()
	site := newAdminSite(t)
	id := site.integration(t, "ORDERS05", "github", githubSecret)
	site.integration(t, "ORDERS05", "bearer", "")
	globex, _ := testfactory.Integration(t, site.pool, testfactory.IntegrationOpts{Tenant: "globex", MessageType: "ORDERS05", Scheme: "github"})
	oldRow := fmt.Sprintf(`#secret-%d`, site.newestSecretID(t, id))
	card := `#integration-` + id

	b := newBrowser(t)
	b.signIn(t, site.url, "/admin/integrations", site.user(t, "admin@acme.example", auth.RoleAdmin, "acme"))
	require.Equal(t, 2, eval[int](t, b, `document.querySelectorAll('article.integration').length`))
	require.Equal(t, "Integrations", eval[string](t, b, `document.querySelector('nav [aria-current=page]').textContent`))
	require.Equal(t, 1, eval[int](t, b, `new Set([...document.querySelectorAll('nav.sections li')].map(li => li.offsetTop)).size`),
		"the sections fit one line at 1280 px")
	require.Equal(t, site.url+"/api/webhook/"+id, eval[string](t, b, `document.querySelector('#webhook-url-`+id+`').textContent`),
		"the page gives the address to configure in the sender")
	b.snapshot(t, "integrations")

	b.do(t,
		chromedp.SetValue(chromedp.CSS(card+` input[name=grace_hours]`), "2"),
		chromedp.Click(chromedp.CSS(card+` form.new-secret button`)),
		chromedp.WaitVisible(chromedp.CSS(`#new-secret-value`)),
	)
	secret := eval[string](t, b, `document.querySelector('#new-secret-value').textContent`)
	require.Contains(t, eval[string](t, b, `document.querySelector('#new-secret header').textContent`), id)
	require.True(t, strings.HasPrefix(eval[string](t, b, `document.querySelector('`+oldRow+` .state').textContent`), "works until"))
	require.Equal(t, http.StatusCreated, site.delivers(t, id, githubSecret, 1), "in its grace period the old secret works")
	require.Equal(t, http.StatusCreated, site.delivers(t, id, secret, 2))
	b.snapshot(t, "integrations-rotated")

	b.do(t,
		chromedp.Click(chromedp.CSS(oldRow+` form.revoke button`)),
		chromedp.WaitVisible(chromedp.CSS(`#secret-revoked`)),
	)
	require.True(t, strings.HasPrefix(eval[string](t, b, `document.querySelector('`+oldRow+` .state').textContent`), "revoked"))
	require.Zero(t, eval[int](t, b, `document.querySelectorAll('`+oldRow+` form').length`), "a revoked secret has nothing left to change")
	require.Equal(t, http.StatusUnauthorized, site.delivers(t, id, githubSecret, 3), "revoked, the old secret stops at once")
	require.Equal(t, http.StatusCreated, site.delivers(t, id, secret, 4))
	b.snapshot(t, "integrations-revoked")

	// A GitHub delivery's page says edihub derived its key itself.
	var message int64
	require.NoError(t, site.pool.QueryRow(t.Context(), `SELECT max(id) FROM messages WHERE integration_id = $1`, id).Scan(&message))
	b.do(t,
		chromedp.Navigate(fmt.Sprintf("%s/admin/messages/%d", site.url, message)),
		chromedp.WaitVisible(chromedp.CSS(`#key-origin`)),
	)
	require.Equal(t, "The key was derived by edihub from the message's content, since the webhook signs no delivery id. The key replaces the fingerprint check: the fingerprint is shown but was never claimed.",
		eval[string](t, b, `document.querySelector('#key-origin').textContent`))
	b.snapshot(t, "message-github-key")

	other := newBrowser(t)
	other.signIn(t, site.url, "/admin/integrations", site.user(t, "admin@globex.example", auth.RoleAdmin, "globex"))
	text := eval[string](t, other, `document.querySelector('main').textContent`)
	require.NotContains(t, text, "acme")
	require.NotContains(t, text, id)
	require.Contains(t, text, globex)
}

// An admin sets a Stripe integration's signature tolerance in the browser;
// the GitHub integration beside it has none.
func TestBrowserAdminSetsIntegrationTolerance(t *testing.T) {
	t.Parallel()
	site := newAdminSite(t)
	stripe := site.integration(t, "ORDERS05", "stripe", stripeSecret)
	github := site.integration(t, "ORDERS05", "github", githubSecret)
	card := `#integration-` + stripe

	b := newBrowser(t)
	b.signIn(t, site.url, "/admin/integrations", site.user(t, "admin@acme.example", auth.RoleAdmin, "acme"))
	require.Equal(t, "300", eval[string](t, b, `document.querySelector('`+card+` input[name=tolerance_seconds]').value`))
	require.Zero(t, eval[int](t, b, `document.querySelectorAll('#integration-`+github+` form.tolerance').length`))
	b.do(t,
		chromedp.SetValue(chromedp.CSS(card+` input[name=tolerance_seconds]`), "10"),
		chromedp.Click(chromedp.CSS(card+` form.tolerance button`)),
		chromedp.WaitVisible(chromedp.CSS(card+` .tolerance-saved`)),
	)
	require.Equal(t, "10", eval[string](t, b, `document.querySelector('`+card+` input[name=tolerance_seconds]').value`))
	require.Equal(t, 10, site.count(t, `SELECT signature_tolerance_seconds FROM integrations WHERE id = $1`, stripe))
	b.snapshot(t, "integrations-tolerance")
}
