package server_test

import (
	"fmt"
	"testing"

	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/require"

	"github.com/lefia/edihub/internal/auth"
)

// messageLinks are the message links of the messages page, in order.
const messageLinks = `Array.from(document.querySelectorAll('tr.message a.message-link'), a => a.getAttribute('href'))`

// An admin answers "what happened to order 4500012345?" and "to IDoc
// 0000000000900101?": the dashboard's count leads to the messages, the
// business key value and the docnum find the message, and its row leads to
// its page. Times show in the admin's own zone, UTC on hover.
func TestBrowserFindMessages(t *testing.T) {
	t.Parallel()
	site := newAdminSite(t)
	email := site.user(t, "admin@example.com", auth.RoleAdmin, "")
	b := newBrowser(t)
	_, err := chromedp.Call(b.ctx, emulation.SetTimezoneOverride, emulation.SetTimezoneOverrideParams{TimezoneID: "Europe/Berlin"})
	require.NoError(t, err)
	b.signIn(t, site.url, "/admin", email)

	b.do(t,
		chromedp.Click(chromedp.CSS(`#messages-link`)),
		chromedp.WaitVisible(chromedp.CSS(`tr.message`)),
	)
	require.Regexp(t, `/admin/messages\?from=`, b.location(t))
	require.Equal(t, "page", eval[string](t, b, `document.querySelector('header nav a[href="/admin/messages"]').getAttribute('aria-current')`))
	all := eval[[]string](t, b, messageLinks)
	require.Len(t, all, site.messages(t), "every tenant's messages, for a global admin")

	// Newest first, in UTC whatever the viewer's zone (this browser's is
	// Europe/Berlin), as the column says and the time filters take.
	var newest, utc string
	require.NoError(t, site.pool.QueryRow(t.Context(), `SELECT '/admin/messages/' || id,
		to_char(received_at AT TIME ZONE 'UTC', 'YYYY-MM-DD HH24:MI:SS')
		FROM messages ORDER BY received_at DESC, id DESC LIMIT 1`).Scan(&newest, &utc))
	require.Equal(t, newest, all[0])
	require.Equal(t, utc, eval[string](t, b, `document.querySelector('tr.message time').textContent`))
	require.Equal(t, "Received, UTC", eval[string](t, b, `document.querySelector('table.messages th').textContent`))
	b.requireFitsWidth(t)
	b.screenshot(t, "messages")

	// The order number finds the message in both tenants, and the tenant
	// narrows it to one.
	b.do(t,
		chromedp.Navigate(site.url+"/admin/messages"),
		chromedp.WaitVisible(chromedp.CSS(`#filter-key`)),
		chromedp.SendKeys(chromedp.CSS(`#filter-key`), "4500012345"),
		chromedp.Click(chromedp.CSS(`#apply-filter`)),
		chromedp.Poll[chromedp.Void](`location.search === "?key=4500012345"`),
		chromedp.Poll[chromedp.Void](`document.querySelectorAll('tr.message').length === 2`),
	)
	require.ElementsMatch(t, []string{messagePath(site.original), messagePath(site.otherOriginal)}, eval[[]string](t, b, messageLinks))
	// A message type is a tenant's: the form says so, and a type without a
	// tenant is refused with the same words rather than matching nothing.
	require.Equal(t, "a code of the tenant chosen: choose a tenant too", eval[string](t, b, `document.querySelector('#message-type-help').textContent`))
	b.do(t,
		chromedp.SendKeys(chromedp.CSS(`#filter-message-type`), "ORDERS05"),
		chromedp.Click(chromedp.CSS(`#apply-filter`)),
		chromedp.WaitVisible(chromedp.CSS(`#results .problems`)),
	)
	require.Contains(t, eval[string](t, b, `document.querySelector('#results .problems').textContent`), "choose a tenant to filter by environment or message type")
	b.screenshot(t, "messages-type-needs-tenant")
	b.do(t,
		chromedp.SetValue(chromedp.CSS(`#filter-tenant`), "acme"),
		chromedp.Click(chromedp.CSS(`#apply-filter`)),
		chromedp.Poll[chromedp.Void](`document.querySelectorAll('tr.message').length === 1`),
	)
	require.Equal(t, []string{messagePath(site.original)}, eval[[]string](t, b, messageLinks))

	// The docnum finds it too; its row leads to its page.
	b.do(t,
		chromedp.Navigate(site.url+"/admin/messages?docnum=0000000000900101&tenant=acme"),
		chromedp.WaitVisible(chromedp.CSS(`tr.message`)),
	)
	require.Equal(t, []string{messagePath(site.original)}, eval[[]string](t, b, messageLinks))
	require.Equal(t, "0000000000900101", eval[string](t, b, `document.querySelector('tr.message td.docnum').textContent`))
	b.do(t,
		chromedp.Click(chromedp.CSS(`tr.message a.message-link`)),
		chromedp.WaitVisible(chromedp.CSS(`#message-docnum`)),
	)
	require.Equal(t, site.url+messagePath(site.original), b.location(t))

	// A time it cannot read is explained, with what it takes.
	b.do(t,
		chromedp.Navigate(site.url+"/admin/messages?from=01/31/2026"),
		chromedp.WaitVisible(chromedp.CSS(`.problems`)),
	)
	require.Contains(t, eval[string](t, b, `document.querySelector('.problems').textContent`), "YYYY-MM-DD HH:MM")
	require.Equal(t, "YYYY-MM-DD or YYYY-MM-DD HH:MM, UTC", eval[string](t, b, `document.querySelector('#from-help').textContent`))
	require.Zero(t, b.dialogs.Load())
}

// A tenant's admin finds only the tenant's own messages, whatever the URL
// names: another tenant's order number, docnum or tenant finds nothing.
func TestBrowserTenantAdminFindsOnlyItsMessages(t *testing.T) {
	t.Parallel()
	site := newAdminSite(t)
	email := site.user(t, "admin@globex.example", auth.RoleAdmin, "globex")
	b := newBrowser(t)
	b.signIn(t, site.url, "/admin/messages", email)
	b.do(t, chromedp.WaitVisible(chromedp.CSS(`tr.message`)))
	require.Equal(t, []string{messagePath(site.otherOriginal)}, eval[[]string](t, b, messageLinks))
	require.Zero(t, eval[int](t, b, `document.querySelectorAll('#filter-tenant').length`), "no tenant to choose")

	for _, query := range []string{"?key=4500012345", "?docnum=0000000000900101"} {
		b.do(t,
			chromedp.Navigate(site.url+"/admin/messages"+query),
			chromedp.WaitVisible(chromedp.CSS(`tr.message`)),
		)
		require.Equal(t, []string{messagePath(site.otherOriginal)}, eval[[]string](t, b, messageLinks), query)
	}
	b.do(t,
		chromedp.Navigate(site.url+"/admin/messages?tenant=acme&key=4500012345"),
		chromedp.WaitVisible(chromedp.CSS(`.problems`)),
	)
	require.Equal(t, `there is no tenant "acme"`, eval[string](t, b, `document.querySelector('.problems li').textContent`))
	require.Zero(t, eval[int](t, b, fmt.Sprintf(`document.querySelectorAll('a[href="%s"]').length`, messagePath(site.original))))
	b.screenshot(t, "messages-tenant-admin")
}

func messagePath(id int64) string { return fmt.Sprintf("/admin/messages/%d", id) }
