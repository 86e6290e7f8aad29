package server_test

import (
	"fmt"
	"net/http"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/require"

	"github.com/lefia/edihub/internal/auth"
	"github.com/lefia/edihub/internal/testfactory"
)

// An admin sees from the navigation that a changed copy awaits review,
// finds it in the queue, dismisses it with a reason on its page, and
// finds it among the dismissed ones; the audit log narrows to changed
// content with one box. An admin of another tenant sees no copy, no
// count, and cannot open the copy.
func TestBrowserReviewQueueDismiss(t *testing.T) {
	t.Parallel()
	site := newChangedCopySite(t)
	require.Equal(t, http.StatusOK, site.post(t, rawEnvelope(t, "ORDERS05", "orders05_resent_same_docnum.json")).status)
	// The changed copy resent: one item, arrived twice.
	require.Equal(t, http.StatusOK, site.post(t, rawEnvelope(t, "ORDERS05", "orders05_changed_content_same_belnr.json")).status)
	testfactory.Tenant(t, site.pool, &testfactory.TenantOpts{Slug: "globex", Name: "Globex"})
	email := site.user(t, "admin@acme.example", auth.RoleAdmin, "acme")

	b := newBrowser(t)
	b.signIn(t, site.url, "/admin", email)
	require.Equal(t, "1", eval[string](t, b, `document.querySelector('#open-reviews').textContent`))
	// With the count, the sections still fit one line at 1280 px.
	require.Equal(t, 1, eval[int](t, b, `new Set([...document.querySelectorAll('nav.sections li')].map(li => li.offsetTop)).size`))

	b.do(t,
		chromedp.Click(chromedp.CSS(`#nav-review`)),
		chromedp.WaitVisible(chromedp.CSS(`table.review`)),
	)
	require.Equal(t, site.url+"/admin/review", b.location(t))
	require.Equal(t, "page", eval[string](t, b, `document.querySelector('#state-open').getAttribute('aria-current')`))
	row := eval[[]string](t, b, `Array.from(document.querySelector('tr.copy').cells, c => c.innerText.replace(/\s+/g, ' ').trim())`)
	require.Equal(t, []string{"production ORDERS05", fmt.Sprintf("copy %d 0000000000900178", site.copyID),
		fmt.Sprintf("#%d 0000000000900101", site.original), "open"}, row[1:])
	require.Regexp(t, `^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d 2 arrivals, last \d{4}-`, row[0])
	b.screenshot(t, "admin_review_open")
	b.requireFitsWidth(t)

	b.do(t,
		chromedp.Click(chromedp.CSS(`a.copy-link`)),
		chromedp.WaitVisible(chromedp.CSS(`#dismiss-reason`)),
	)
	require.Equal(t, "page", eval[string](t, b, `document.querySelector('#nav-review').getAttribute('aria-current')`))
	b.screenshot(t, "admin_blocked_decide")
	b.requireFitsWidth(t)
	b.do(t,
		chromedp.SendKeys(chromedp.CSS(`#dismiss-reason`), "repeat output with a new date only"),
		chromedp.Click(chromedp.CSS(`#dismiss-submit`)),
	)
	b.do(t, chromedp.WaitVisible(chromedp.CSS(`#dismissed`)))
	require.Equal(t, fmt.Sprintf("%s/admin/blocked/%d?dismissed=1", site.url, site.copyID), b.location(t))
	require.Contains(t, eval[string](t, b, `document.querySelector('#dismissed').textContent`), "repeat output with a new date only")
	require.False(t, eval[bool](t, b, `document.querySelector('#open-reviews') !== null`), "nothing awaits review now")
	require.False(t, eval[bool](t, b, `document.querySelector('#release-submit, #dismiss-submit') !== null`))
	b.screenshot(t, "admin_blocked_dismissed")

	b.do(t, chromedp.Click(chromedp.CSS(`#nav-review`)))
	b.do(t, chromedp.WaitVisible(chromedp.CSS(`#no-copies`)))
	b.do(t, chromedp.Click(chromedp.CSS(`#state-dismissed`)))
	b.do(t, chromedp.WaitVisible(chromedp.CSS(`tr.copy[data-state="dismissed"]`)))
	require.Equal(t, site.url+"/admin/review?state=dismissed", b.location(t))
	require.Contains(t, eval[string](t, b, `document.querySelector('tr.copy .decision').textContent`),
		"by admin@acme.example")
	b.requireFitsWidth(t)
	b.screenshot(t, "admin_review_dismissed")

	// The audit log: the changed duplicate only, then its dismissal.
	b.do(t,
		chromedp.Navigate(site.url+"/admin/audit?action=message.duplicate_blocked"),
		chromedp.WaitVisible(chromedp.CSS(`#filter-changed`)),
	)
	require.Equal(t, 3, eval[int](t, b, `document.querySelectorAll('tr.event').length`))
	b.do(t,
		chromedp.Click(chromedp.CSS(`#filter-changed`)),
		chromedp.Click(chromedp.CSS(`#apply-filter`)),
		chromedp.Poll[chromedp.Void](`location.search === "?action=message.duplicate_blocked&content=changed"`),
		chromedp.Poll[chromedp.Void](`document.querySelectorAll('tr.event').length === 2`),
	)
	require.Equal(t, fmt.Sprintf("/admin/blocked/%d", site.copyID), eval[string](t, b, `document.querySelector('tr.event a.diff').getAttribute('href')`))
	b.requireFitsWidth(t)
	b.screenshot(t, "admin_audit_content_changed")
	b.do(t,
		chromedp.Navigate(site.url+"/admin/audit?action=message.duplicate_dismissed"),
		chromedp.WaitVisible(chromedp.CSS(`tr.event`)),
	)
	require.Contains(t, eval[string](t, b, `document.querySelector('tr.event').textContent`), "repeat output with a new date only")
	require.Equal(t, fmt.Sprintf("/admin/blocked/%d", site.copyID), eval[string](t, b, `document.querySelector('tr.event a.copy').getAttribute('href')`),
		"the dismissal links to the copy it left blocked")
	require.True(t, eval[bool](t, b, `document.querySelector('tr.event a.original') !== null`))
	b.requireFitsWidth(t)
	b.screenshot(t, "admin_audit_dismissed")
	require.Zero(t, b.dialogs.Load())

	// Another tenant's admin.
	stranger := site.user(t, "admin@globex.example", auth.RoleAdmin, "globex")
	other := newBrowser(t)
	other.signIn(t, site.url, "/admin/review?state=any", stranger)
	require.True(t, eval[bool](t, other, `document.querySelector('#no-copies') !== null`))
	require.False(t, eval[bool](t, other, `document.querySelector('#open-reviews') !== null`))
	other.do(t,
		chromedp.Navigate(fmt.Sprintf("%s/admin/blocked/%d", site.url, site.copyID)),
		chromedp.WaitVisible(chromedp.CSS(`main`)),
	)
	require.False(t, eval[bool](t, other, `document.querySelector('#dismiss-submit, #diff') !== null`))
	require.Contains(t, eval[string](t, other, `document.querySelector('main').textContent`), fmt.Sprintf("there is no blocked copy %d", site.copyID))
	require.Zero(t, other.dialogs.Load())
}
