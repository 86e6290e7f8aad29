package server_test

import (
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/require"

	"github.com/lefia/edihub/internal/auth"
)

// A signed-in admin who follows a wrong link stays inside the admin pages:
// the not-found page keeps the navigation and who is signed in, and no page
// asks for an icon that is not there.
func TestBrowserNotFoundKeepsTheAdminFrame(t *testing.T) {
	t.Parallel()
	site := setup(t)
	email := site.user(t, "admin@acme.example", auth.RoleAdmin, "acme")
	b := newBrowser(t)
	b.signIn(t, site.url, "/admin", email)

	b.do(t,
		chromedp.Navigate(site.url+"/admin/no-such-page"),
		chromedp.WaitVisible(chromedp.CSS(`#error-detail`)),
	)
	require.Equal(t, "Page not found", eval[string](t, b, `document.querySelector('main h1').textContent`))
	require.Equal(t, email, eval[string](t, b, `document.querySelector('#signed-in-as').textContent`))
	require.Equal(t, 1, eval[int](t, b, `document.querySelectorAll('#sign-out').length`))
	require.Equal(t, 1, eval[int](t, b, `document.querySelectorAll('header nav a[href="/admin/audit"]:not(.brand)').length`))
	b.requireFitsWidth(t)
	b.screenshot(t, "not-found")

	// The icon the page names, and the one browsers ask for by default.
	for _, path := range []string{`document.querySelector('link[rel=icon]').href`, `'/favicon.ico'`} {
		status, err := chromedp.Run(b.ctx, chromedp.Evaluate[int](
			`fetch(`+path+`).then(r => r.headers.get('Content-Type') === 'image/svg+xml' ? r.status : -r.status)`, chromedp.EvalAwaitPromise))
		require.NoError(t, err)
		require.Equal(t, 200, status, path)
	}
	require.Empty(t, eval[[]string](t, b, `performance.getEntriesByType('resource').filter(e => e.responseStatus >= 400).map(e => e.name)`))

	// Signing out from the error page works as from any page.
	b.do(t,
		chromedp.Click(chromedp.CSS(`#sign-out`)),
		chromedp.WaitVisible(chromedp.CSS(`#sign-in`)),
	)
}
