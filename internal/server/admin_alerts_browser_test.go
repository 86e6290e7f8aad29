package server_test

import (
	"fmt"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/require"

	"github.com/lefia/edihub/internal/auth"
)

// An admin sees the open alerts at the top of the dashboard, opens one,
// filters the alerts page, and acknowledges an alert in one click.
func TestBrowserAdminAcknowledgesAlerts(t *testing.T) {
	t.Parallel()
	site := newAlertSite(t)
	email := site.user(t, "ops@example.com", auth.RoleAdmin, "")
	b := newBrowser(t)
	b.signIn(t, site.url, "/admin", email)
	require.Equal(t, 3, eval[int](t, b, `document.querySelectorAll('#open-alerts li.alert').length`), "the open ones, of every tenant and global")
	require.Equal(t, 0, int(b.dialogs.Load()), "titles are text, not markup")
	b.requireFitsWidth(t)
	b.screenshot(t, "dashboard-alerts")

	b.do(t,
		chromedp.Click(chromedp.CSS(fmt.Sprintf(`#open-alerts a[href="/admin/alerts/%d"]`, site.acmeOpen))),
		chromedp.WaitVisible(chromedp.CSS(`#alert-title`)),
	)
	require.Equal(t, []string{"tenant Destination #1 of acme/production is failing <script>alert(1)</script>", "since then"},
		eval[[]string](t, b, `Array.from(document.querySelectorAll('#alert-lines li'), l => l.textContent)`))
	b.requireFitsWidth(t)
	b.screenshot(t, "alert")

	b.do(t,
		chromedp.Click(chromedp.CSS(`a[href="/admin/alerts"]`)),
		chromedp.WaitVisible(chromedp.CSS(`#alerts-filter`)),
		chromedp.SetValue(chromedp.CSS(`#filter-state`), "open"),
		chromedp.SetValue(chromedp.CSS(`#filter-tenant`), "acme"),
		chromedp.Click(chromedp.CSS(`#apply-filter`)),
		chromedp.Poll[chromedp.Void](`location.search === "?state=open&tenant=acme"`),
		chromedp.Poll[chromedp.Void](`document.querySelectorAll('tr.alert').length === 1`),
	)
	b.screenshot(t, "alerts-open-acme")
	b.do(t,
		chromedp.Click(chromedp.CSS(`tr.alert button.acknowledge-one`)),
		chromedp.WaitVisible(chromedp.CSS(`#no-alerts`)),
	)
	require.Equal(t, "?state=open&tenant=acme", eval[string](t, b, `location.search`), "back on the filtered page")
	b.do(t,
		chromedp.Navigate(site.url+"/admin/alerts"),
		chromedp.WaitVisible(chromedp.CSS(fmt.Sprintf(`tr.alert[data-id="%d"][data-state="acknowledged"]`, site.acmeOpen))),
	)
	b.requireFitsWidth(t)
	b.screenshot(t, "alerts")
}
