package server_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/require"

	"github.com/lefia/edihub/internal/auth"
)

// snapshot checks that the page and its tables fit the 1280 px window
// without sideways scrolling, then takes the shared screenshot.
func (b *browser) snapshot(t *testing.T, name string) {
	t.Helper()
	b.requireFitsWidth(t)
	require.Empty(t, eval[[]string](t, b, `[...document.querySelectorAll('.overflow-auto')].filter(e => e.scrollWidth > e.clientWidth).map(e => e.scrollWidth + ' > ' + e.clientWidth)`),
		"%s: no table scrolls sideways at 1280 px", name)
	b.screenshot(t, name)
}

// An admin creates a key and sees it once, rotates it and revokes the old
// one, in the browser; another tenant's admin sees none of it.
func TestBrowserAdminManagesAPIKeys(t *testing.T) {
	t.Parallel()
	site := newAdminSite(t)
	acmeKey := site.keyID(t, site.apiKey)
	admin := site.user(t, "admin@acme.example", auth.RoleAdmin, "acme")

	b := newBrowser(t)
	b.signIn(t, site.url, "/admin/api-keys", admin)
	b.do(t, chromedp.EmulateViewport(1280, 800))
	require.Equal(t, 1, eval[int](t, b, `document.querySelectorAll('tr.key-row').length`))
	b.do(t,
		chromedp.SendKeys(chromedp.CSS(`#create-key-name`), "SAP PI production, second system"),
		chromedp.Click(chromedp.CSS(`#create-key-submit`)),
		chromedp.WaitVisible(chromedp.CSS(`#new-key-secret`)),
	)
	created := eval[string](t, b, `document.querySelector('#new-key-secret').textContent`)
	require.True(t, strings.HasPrefix(created, "edh_"), created)
	require.Equal(t, 2, eval[int](t, b, `document.querySelectorAll('tr.key-row').length`))
	// The two active keys are told apart by name and by use.
	require.Equal(t, []string{"SAP PI production, second system", "test sender"},
		eval[[]string](t, b, `[...document.querySelectorAll('tr.key-row td.name')].map(c => c.firstChild.textContent.trim())`))
	used := eval[[]string](t, b, `[...document.querySelectorAll('tr.key-row td.last-used')].map(c => c.textContent.trim())`)
	require.Equal(t, "never", used[0])
	require.Regexp(t, `^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d`, used[1], "the site's key has sent")
	// Every row's buttons show whole, the last one too.
	require.Empty(t, eval[[]string](t, b, `[...document.querySelectorAll('tr.key-row button')].filter(e => e.getBoundingClientRect().right > document.documentElement.clientWidth).map(e => e.textContent)`))
	b.snapshot(t, "api-keys-created")

	row := fmt.Sprintf(`#key-%d`, acmeKey)
	b.do(t,
		chromedp.SetValue(chromedp.CSS(row+` input[name=grace_hours]`), "2"),
		chromedp.Click(chromedp.CSS(row+` form.rotate button`)),
		// The page before showed a new key too: wait for the rotation's.
		chromedp.WaitVisible(chromedp.CSS(fmt.Sprintf(`#new-key[data-replaces="%d"]`, acmeKey))),
	)
	require.Contains(t, eval[string](t, b, `document.querySelector('#new-key header').textContent`),
		fmt.Sprintf("replacing key %d", acmeKey))
	require.True(t, strings.HasPrefix(eval[string](t, b, `document.querySelector('`+row+` .state').textContent`), "works until"))
	require.Equal(t, http.StatusCreated, site.sends(t, site.apiKey, 1), "in its grace period the old key works")
	b.snapshot(t, "api-keys-rotated")

	b.do(t,
		chromedp.Click(chromedp.CSS(row+` form.revoke button`)),
		chromedp.WaitVisible(chromedp.CSS(`#key-revoked`)),
	)
	require.True(t, strings.HasPrefix(eval[string](t, b, `document.querySelector('`+row+` .state').textContent`), "revoked"))
	require.Zero(t, eval[int](t, b, `document.querySelectorAll('`+row+` form').length`), "a revoked key has nothing left to change")
	require.Equal(t, http.StatusUnauthorized, site.sends(t, site.apiKey, 2), "revoked, the key stops at once")
	b.snapshot(t, "api-keys-revoked")

	other := newBrowser(t)
	other.signIn(t, site.url, "/admin/api-keys", site.user(t, "admin@globex.example", auth.RoleAdmin, "globex"))
	text := eval[string](t, other, `document.querySelector('main').textContent`)
	require.NotContains(t, text, "acme")
	require.NotContains(t, text, created[:10])
	require.Equal(t, []string{"globex/production"},
		eval[[]string](t, other, `[...document.querySelectorAll('#create-key option')].map(o => o.value)`))
}
