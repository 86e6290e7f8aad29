package server_test

import (
	"fmt"
	"net/http"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/require"

	"github.com/lefia/edihub/internal/auth"
)

// The audit log fits a 1280 px window without sideways scrolling, and
// every row says what it is about in words and links to what it names: a
// blocked duplicate to its original and, with changed content, to the kept
// copy, whose own docnum it shows; a release to the new message, the copy
// and the original; a sign-in names its fields instead of raw JSON.
func TestBrowserAuditTableFitsAndLinks(t *testing.T) {
	t.Parallel()
	site := newChangedCopySite(t)
	require.Equal(t, http.StatusOK, site.post(t, rawEnvelope(t, "ORDERS05", "orders05_resent_same_docnum.json"),
		"User-Agent", "SAP NetWeaver/7.5 with a rather long product token that must wrap inside its cell").status)
	email := site.user(t, "admin@acme.example", auth.RoleAdmin, "")
	b := newBrowser(t)
	b.signIn(t, site.url, fmt.Sprintf("/admin/blocked/%d", site.copyID), email)
	b.do(t,
		chromedp.SendKeys(chromedp.CSS(`#release-reason`), "corrected order: item 00040 added"),
		chromedp.Click(chromedp.CSS(`#release-submit`)),
		chromedp.WaitVisible(chromedp.CSS(`#release-done`)),
		chromedp.Navigate(site.url+"/admin/audit"),
		chromedp.WaitVisible(chromedp.CSS(`tr.event`)),
	)
	b.screenshot(t, "audit")
	b.requireFitsWidth(t)

	changed := `tr.event[data-action="message.duplicate_blocked"]:has(a.diff)`
	require.Equal(t, fmt.Sprintf("/admin/messages/%d", site.original),
		eval[string](t, b, `document.querySelector('`+changed+` a.original').getAttribute('href')`))
	require.Equal(t, fmt.Sprintf("/admin/blocked/%d", site.copyID),
		eval[string](t, b, `document.querySelector('`+changed+` a.diff').getAttribute('href')`))
	require.Equal(t, "0000000000900178", eval[string](t, b, `document.querySelector('`+changed+` .copy-docnum').textContent`),
		"the blocked copy's own docnum")
	require.Equal(t, 2, eval[int](t, b, `document.querySelectorAll('tr.event[data-action="message.duplicate_blocked"] a.original').length`))

	released := `tr.event[data-action="message.duplicate_released"]`
	var newID int64
	require.NoError(t, site.pool.QueryRow(t.Context(), `SELECT released_message_id FROM blocked_copies`).Scan(&newID))
	require.Equal(t, []string{fmt.Sprintf("/admin/messages/%d", newID), fmt.Sprintf("/admin/blocked/%d", site.copyID),
		fmt.Sprintf("/admin/messages/%d", site.original)},
		eval[[]string](t, b, `Array.from(document.querySelectorAll('`+released+` a'), a => a.getAttribute('href'))`))

	// A sign-in names its fields, in words rather than a JSON object.
	signIn := `tr.event[data-action="user.logged_in"]`
	require.Equal(t, []string{"email", "remote_addr"},
		eval[[]string](t, b, `Array.from(document.querySelectorAll('`+signIn+` td.details .field .name'), n => n.textContent)`))
	require.Contains(t, eval[string](t, b, `document.querySelector('`+signIn+` td.details').textContent`), "admin@acme.example")
	require.NotContains(t, eval[string](t, b, `document.querySelector('`+signIn+`').textContent`), "{")

	// Times are in UTC, as the column says and the time filters take.
	require.Regexp(t, `^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d$`, eval[string](t, b, `document.querySelector('tr.event time').textContent`))
	require.Equal(t, "Time, UTC", eval[string](t, b, `document.querySelector('table.events th').textContent`))
	require.Equal(t, "YYYY-MM-DD or YYYY-MM-DD HH:MM, UTC", eval[string](t, b, `document.querySelector('#from-help').textContent`))
	require.Zero(t, b.dialogs.Load())
}

// A blocked duplicate whose original has expired (RETENTION_MESSAGES is
// shorter than RETENTION_AUDIT_EVENTS) is still listed, with its original's
// id and docnum marked expired instead of a link to a page that is gone.
func TestBrowserAuditMarksExpiredOriginals(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.messageType(t, "ORDERS05", []string{"*.IDOC.E1EDK01.BELNR"}, nil)
	first := b.post(t, rawEnvelope(t, "ORDERS05", "orders05.json"))
	require.Equal(t, http.StatusCreated, first.status, "%s", first.body)
	require.Equal(t, http.StatusOK, b.post(t, rawEnvelope(t, "ORDERS05", "orders05_resent_same_docnum.json")).status)
	original := int64(first.json(t)["id"].(float64))
	// As expiry removes a message: with its key values.
	_, err := b.pool.Exec(t.Context(), `DELETE FROM message_keys WHERE message_id = $1`, original)
	require.NoError(t, err)
	_, err = b.pool.Exec(t.Context(), `DELETE FROM messages WHERE id = $1`, original)
	require.NoError(t, err)

	email := b.user(t, "admin@acme.example", auth.RoleAdmin, "")
	br := newBrowser(t)
	br.signIn(t, b.url, "/admin/audit?action=message.duplicate_blocked", email)
	br.do(t, chromedp.WaitVisible(chromedp.CSS(`tr.event`)))
	br.screenshot(t, "audit-expired-original")
	row := `tr.event[data-action="message.duplicate_blocked"]`
	require.Zero(t, eval[int](t, br, `document.querySelectorAll('`+row+` a.original').length`), "no link to a gone message")
	require.Equal(t, fmt.Sprintf("#%d expired", original),
		eval[string](t, br, `document.querySelector('`+row+` .original.expired').textContent.replace(/\s+/g, ' ').trim()`))
	require.Equal(t, "0000000000900101", eval[string](t, br, `document.querySelector('`+row+` .original-docnum').textContent`),
		"the original's docnum, as the event recorded it")
}
