package server_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/require"

	"github.com/lefia/edihub/internal/auth"
	"github.com/lefia/edihub/internal/testfactory"
)

// An admin disables a user, whose open page then leads to the sign-in form,
// enables them again and resets their password, in the browser; another
// tenant's admin sees none of it.
func TestBrowserAdminManagesUsers(t *testing.T) {
	t.Parallel()
	site := newAdminSite(t)
	admin := site.user(t, "admin@acme.example", auth.RoleAdmin, "acme")
	clerk := site.user(t, "clerk@acme.example", auth.RoleViewer, "acme")
	clerkRow := fmt.Sprintf(`#user-%d`, site.userID(t, clerk))

	c := newBrowser(t)
	c.signIn(t, site.url, "/admin/audit", clerk)

	b := newBrowser(t)
	b.signIn(t, site.url, "/admin/users", admin)
	require.Zero(t, eval[int](t, b, fmt.Sprintf(`document.querySelectorAll('#user-%d form').length`, site.userID(t, admin))),
		"the admin's own row offers no change")
	b.snapshot(t, "users")

	b.do(t,
		chromedp.Click(chromedp.CSS(clerkRow+` form.disable button`)),
		chromedp.WaitVisible(chromedp.CSS(`#user-changed`)),
	)
	require.True(t, strings.HasPrefix(eval[string](t, b, `document.querySelector('`+clerkRow+` .state').textContent`), "disabled"))
	b.snapshot(t, "users-disabled")

	c.do(t,
		chromedp.Reload(),
		chromedp.WaitVisible(chromedp.CSS(`#sign-in`)),
	)
	c.do(t,
		chromedp.SendKeys(chromedp.CSS(`input[name=email]`), clerk),
		chromedp.SendKeys(chromedp.CSS(`input[name=password]`), testfactory.Password),
		chromedp.Click(chromedp.CSS(`#sign-in`)),
		chromedp.WaitVisible(chromedp.CSS(`.problem`)),
	)
	require.Contains(t, eval[string](t, c, `document.querySelector('.problem').textContent`), "account is disabled")
	c.snapshot(t, "login-disabled")

	b.do(t,
		chromedp.Click(chromedp.CSS(clerkRow+` form.enable button`)),
		chromedp.WaitVisible(chromedp.CSS(clerkRow+` form.disable`)),
	)
	require.Equal(t, "active", eval[string](t, b, `document.querySelector('`+clerkRow+` .state').textContent`))
	b.do(t,
		chromedp.Click(chromedp.CSS(clerkRow+` form.reset-password button`)),
		chromedp.WaitVisible(chromedp.CSS(`#new-password-secret`)),
	)
	pw := eval[string](t, b, `document.querySelector('#new-password-secret').textContent`)
	require.Len(t, pw, 24)
	require.Contains(t, eval[string](t, b, `document.querySelector('#new-password header').textContent`), clerk)
	b.snapshot(t, "users-password-reset")

	c.do(t,
		chromedp.Navigate(site.url+"/admin/audit"),
		chromedp.WaitVisible(chromedp.CSS(`#sign-in`)),
		chromedp.SendKeys(chromedp.CSS(`input[name=email]`), clerk),
		chromedp.SendKeys(chromedp.CSS(`input[name=password]`), pw),
		chromedp.Click(chromedp.CSS(`#sign-in`)),
		chromedp.WaitVisible(chromedp.CSS(`#signed-in-as`)),
	)

	// The clerk's tab signs in as another tenant's admin.
	c.do(t,
		chromedp.Click(chromedp.CSS(`#sign-out`)),
		chromedp.WaitVisible(chromedp.CSS(`#sign-in`)),
	)
	c.signIn(t, site.url, "/admin/users", site.user(t, "admin@globex.example", auth.RoleAdmin, "globex"))
	text := eval[string](t, c, `document.querySelector('main').textContent`)
	require.NotContains(t, text, "acme")
	require.Equal(t, 1, eval[int](t, c, `document.querySelectorAll('tr.user').length`))
}
