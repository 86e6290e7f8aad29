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

// An admin signs in, filters the audit log to blocked duplicates, follows a
// row to the original message, comes back with the filter intact, and signs
// out.
func TestBrowserAdminFollowsADuplicateToItsOriginal(t *testing.T) {
	t.Parallel()
	site := newAdminSite(t)
	email := site.user(t, "admin@acme.example", auth.RoleAdmin, "")
	b := newBrowser(t)

	b.signIn(t, site.url, "/admin/audit", email)
	require.Equal(t, site.url+"/admin/audit", b.location(t), "back where the sign-in started")
	require.Greater(t, eval[int](t, b, `document.querySelectorAll('tr.event:not([data-action="message.duplicate_blocked"])').length`), 0,
		"unfiltered, the log holds other events too")

	// Filtering swaps the results in with htmx and keeps the filter in the URL.
	b.do(t,
		chromedp.SetValue(chromedp.CSS(`#filter-action`), "message.duplicate_blocked"),
		chromedp.Click(chromedp.CSS(`#apply-filter`)),
		chromedp.Poll[chromedp.Void](`location.search === "?action=message.duplicate_blocked"`),
		chromedp.Poll[chromedp.Void](`document.querySelectorAll('tr.event:not([data-action="message.duplicate_blocked"])').length === 0`),
	)
	require.Equal(t, 2, eval[int](t, b, `document.querySelectorAll('tr.event').length`), "one duplicate per tenant")
	row := eval[[]string](t, b, fmt.Sprintf(
		`Array.from(document.querySelector('a.original[href="/admin/messages/%d"]').closest('tr').cells, c => c.innerText.trim())`,
		site.original))
	require.Regexp(t, `^message.duplicate_blocked\s+api_key:\d+$`, row[1])
	require.Regexp(t, `^acme / production\s+ORDERS05$`, row[2])
	require.Regexp(t, `^fingerprint\s*[0-9a-f]{12}…$`, row[3])
	require.Equal(t, "identical", row[4])
	require.Regexp(t, `^copy 0000000000900101\s+receive-message from 127.0.0.1$`, row[5], "the blocked copy's docnum and source")
	require.Regexp(t, fmt.Sprintf(`^original #%d\s*0000000000900101$`, site.original), row[6])

	// The row leads to the original message, its key values marked.
	link := fmt.Sprintf(`a.original[href="/admin/messages/%d"]`, site.original)
	b.do(t,
		chromedp.Click(chromedp.CSS(link)),
		chromedp.WaitVisible(chromedp.CSS(`#payload`)),
	)
	require.Equal(t, fmt.Sprintf("%s/admin/messages/%d", site.url, site.original), b.location(t))
	require.Equal(t, []string{`"4500012345"`}, eval[[]string](t, b, `Array.from(document.querySelectorAll('#payload mark'), m => m.textContent)`))
	require.Equal(t, 1, eval[int](t, b, `document.querySelectorAll('#duplicates tr.event').length`))
	require.Equal(t, "0000000000900101", eval[string](t, b, `document.querySelector('#message-docnum').textContent`))

	// The back button returns to the filtered log.
	b.do(t,
		chromedp.NavigateBack(),
		chromedp.WaitVisible(chromedp.CSS(`#filter-action`)),
	)
	require.Equal(t, site.url+"/admin/audit?action=message.duplicate_blocked", b.location(t))
	require.Equal(t, "message.duplicate_blocked", eval[string](t, b, `document.querySelector('#filter-action').value`))
	require.Equal(t, 2, eval[int](t, b, `document.querySelectorAll('tr.event').length`))

	b.do(t,
		chromedp.Click(chromedp.CSS(`#sign-out`)),
		chromedp.WaitVisible(chromedp.CSS(`#sign-in`)),
	)
	require.Equal(t, site.url+"/admin/login", b.location(t))
	b.do(t,
		chromedp.Navigate(site.url+"/admin/audit"),
		chromedp.WaitVisible(chromedp.CSS(`#sign-in`)),
	)
	require.Zero(t, b.dialogs.Load())
}

// A payload full of HTML and script is shown as text: nothing in it runs
// and no element is made from it.
func TestBrowserShowsPayloadHTMLAsText(t *testing.T) {
	t.Parallel()
	site := newAdminSite(t)
	site.messageType(t, "SHOP_ORDER", []string{"id"}, nil)
	const script = `<script>alert(1)</script>`
	// Written by hand: encoding/json would escape < and > as \u003c.
	body := []byte(`{"message_type": "SHOP_ORDER", "docnum": "</code><script>alert(3)</script>",
		"payload": {"id": "<script>alert(1)</script>", "note": "<img src=x onerror=\"alert(document.domain)\">",
		            "<b>key</b>": "</pre><svg onload=alert(4)>"}}`)
	id := site.originalWithDuplicate(t, site.apiKey, body)

	email := site.user(t, "admin@acme.example", auth.RoleAdmin, "")
	b := newBrowser(t)
	b.signIn(t, site.url, fmt.Sprintf("/admin/messages/%d", id), email)

	text := eval[string](t, b, `document.querySelector('#payload').textContent`)
	for _, s := range []string{script, `<img src=x onerror=\"alert(document.domain)\">`, `"<b>key</b>"`, `</pre><svg onload=alert(4)>`} {
		require.Contains(t, text, s)
	}
	require.Equal(t, []string{`"` + script + `"`}, eval[[]string](t, b, `Array.from(document.querySelectorAll('#payload mark'), m => m.textContent)`),
		"the key value is marked, as text")
	require.Equal(t, `</code><script>alert(3)</script>`, eval[string](t, b, `document.querySelector('#message-docnum').textContent`))
	require.Zero(t, eval[int](t, b, `document.querySelectorAll('main script, main img, main svg, main b').length`),
		"no element was made from the payload")

	// The same values in the audit log are text too.
	b.do(t,
		chromedp.Navigate(site.url+"/admin/audit?action=message.duplicate_blocked&message_type=SHOP_ORDER&tenant=acme"),
		chromedp.WaitVisible(chromedp.CSS(`tr.event`)),
	)
	require.Contains(t, eval[string](t, b, `document.querySelector('tr.event').textContent`), `</code><script>alert(3)</script>`)
	require.Zero(t, eval[int](t, b, `document.querySelectorAll('main script, main img, main svg').length`))
	require.Zero(t, b.dialogs.Load(), "no script ran")
}

// A viewer's pages have no editing control; an admin's users page has the
// form that creates users.
func TestBrowserViewerSeesNoEditingControls(t *testing.T) {
	t.Parallel()
	site := newAdminSite(t)
	viewer := site.user(t, "viewer@acme.example", auth.RoleViewer, "acme")
	admin := site.user(t, "admin@acme.example", auth.RoleAdmin, "acme")

	// Every form a viewer may see either reads (GET) or signs out.
	const editing = `document.querySelectorAll('form:not([method=get]):not([action="/admin/logout"])').length`
	b := newBrowser(t)
	b.signIn(t, site.url, "/admin/users", viewer)
	require.Contains(t, eval[string](t, b, `document.querySelector('table.users').textContent`), viewer)
	for _, path := range []string{"/admin/users", "/admin/audit", fmt.Sprintf("/admin/messages/%d", site.original), "/admin/message-types"} {
		b.do(t,
			chromedp.Navigate(site.url+path),
			chromedp.WaitVisible(chromedp.CSS(`#signed-in-as`)),
		)
		require.Zero(t, eval[int](t, b, editing), path)
	}
	b.do(t,
		chromedp.Click(chromedp.CSS(`#sign-out`)),
		chromedp.WaitVisible(chromedp.CSS(`#sign-in`)),
	)

	b.signIn(t, site.url, "/admin/users", admin)
	require.Equal(t, 3, eval[int](t, b, editing), "an admin can create users, and disable the viewer or reset their password")

	// The admin creates a viewer; the new user appears in the list.
	b.do(t,
		chromedp.SendKeys(chromedp.CSS(`#create-user input[name=email]`), "clerk@acme.example"),
		chromedp.SendKeys(chromedp.CSS(`#create-user input[name=password]`), testfactory.Password),
		chromedp.Click(chromedp.CSS(`#create-user-submit`)),
		chromedp.WaitVisible(chromedp.CSS(`#user-created`)),
	)
	require.True(t, strings.HasSuffix(b.location(t), "/admin/users?created=clerk%40acme.example"))
	require.Contains(t, eval[string](t, b, `document.querySelector('table.users').textContent`), "clerk@acme.example")
}

// A tenant's user who types another tenant's URLs gets nothing of it.
func TestBrowserTenantUserCannotOpenAnotherTenantsData(t *testing.T) {
	t.Parallel()
	site := newAdminSite(t)
	email := site.user(t, "viewer@globex.example", auth.RoleViewer, "globex")
	b := newBrowser(t)
	b.signIn(t, site.url, "/admin/audit", email)
	b.do(t,
		chromedp.Navigate(fmt.Sprintf("%s/admin/messages/%d", site.url, site.original)),
		chromedp.WaitVisible(chromedp.CSS(`#error-detail`)),
	)
	require.Equal(t, fmt.Sprintf("there is no message %d", site.original),
		eval[string](t, b, `document.querySelector('#error-detail').textContent`))

	for _, page := range []struct{ query, shown string }{
		{fmt.Sprintf("?message=%d", site.original), `#no-events`},
		{"?tenant=acme", `.problems`},
		{"?action=message.duplicate_blocked", `tr.event`},
	} {
		b.do(t,
			chromedp.Navigate(site.url+"/admin/audit"+page.query),
			chromedp.WaitVisible(chromedp.CSS(page.shown)),
		)
		require.Zero(t, eval[int](t, b, fmt.Sprintf(`document.querySelectorAll('a[href="/admin/messages/%d"]').length`, site.original)), page.query)
	}
	require.Equal(t, 1, eval[int](t, b, fmt.Sprintf(`document.querySelectorAll('a.original[href="/admin/messages/%d"]').length`, site.otherOriginal)),
		"the tenant's own duplicate is listed, on the last page shown")
}

// A docnum holding a right-to-left override and an escape sequence, stored
// before intake refused them, shows in a real browser as escapes: the text
// after it keeps its order, and nothing is hidden.
func TestBrowserShowsInvisibleCharactersEscaped(t *testing.T) {
	t.Parallel()
	site := newAdminSite(t)
	_, err := site.pool.Exec(t.Context(), `UPDATE messages SET docnum = $1 WHERE id = $2`, "4711\u202Egpj.exe\x1b[2J", site.original)
	require.NoError(t, err)
	email := site.user(t, "root@example.com", auth.RoleAdmin, "")
	b := newBrowser(t)
	b.signIn(t, site.url, fmt.Sprintf("/admin/messages/%d", site.original), email)
	b.do(t, chromedp.WaitVisible(chromedp.CSS(`#message-docnum`)))
	require.Equal(t, `4711\u202egpj.exe\x1b[2J`, eval[string](t, b, `document.querySelector('#message-docnum').textContent`))
}
