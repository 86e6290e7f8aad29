package server_test

import (
	"fmt"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/require"

	"github.com/lefia/edihub/internal/auth"
)

// An admin opens the partners page from the navigation, sees which
// numbers a partner skipped, and filters the partners with gaps.
func TestBrowserPartnersShowMissingInterchanges(t *testing.T) {
	t.Parallel()
	site := newPartnerSite(t)
	email := site.user(t, "ops@example.com", auth.RoleAdmin, "")
	b := newBrowser(t)
	b.signIn(t, site.url, "/admin", email)
	b.do(t,
		chromedp.Click(chromedp.CSS(`nav.sections a[href="/admin/partners"]`)),
		chromedp.WaitVisible(chromedp.CSS(`#partners-filter`)),
	)
	require.Equal(t, 3, eval[int](t, b, `document.querySelectorAll('tr.partner').length`))
	require.Equal(t, "903–904", eval[string](t, b,
		fmt.Sprintf(`document.querySelector('tr.partner[data-id="%d"] .missing').textContent`, site.skipping)))
	require.Equal(t, "Partners", eval[string](t, b, `document.querySelector('nav.sections a[aria-current="page"]').textContent`))
	b.requireFitsWidth(t)
	b.screenshot(t, "partners")

	b.do(t,
		chromedp.SetValue(chromedp.CSS(`#filter-gaps`), "open"),
		chromedp.Click(chromedp.CSS(`#apply-filter`)),
		chromedp.Poll[chromedp.Void](`location.search === "?gaps=open"`),
		chromedp.Poll[chromedp.Void](`document.querySelectorAll('tr.partner').length === 1`),
	)
	b.requireFitsWidth(t)
	b.screenshot(t, "partners-with-gaps")
}
