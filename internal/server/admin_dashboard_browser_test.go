package server_test

import (
	"fmt"
	"net/http"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/require"

	"github.com/lefia/edihub/internal/auth"
)

// An admin opens the dashboard, whose numbers are the database's, follows
// the blocked duplicates to the changed copy's diff, accepts the copy as a
// new message, and finds the release in the audit log.
func TestBrowserDashboardDiffAndRelease(t *testing.T) {
	t.Parallel()
	site := setup(t)
	site.messageType(t, "ORDERS05", []string{"*.IDOC.E1EDK01.BELNR"}, nil)
	require.Equal(t, http.StatusCreated, site.post(t, rawEnvelope(t, "ORDERS05", "orders05.json")).status)
	for _, sample := range []string{"orders05_changed_content_same_belnr.json", "orders05_resent_same_docnum.json"} {
		require.Equal(t, http.StatusOK, site.post(t, rawEnvelope(t, "ORDERS05", sample)).status)
	}
	email := site.user(t, "admin@acme.example", auth.RoleAdmin, "")
	b := newBrowser(t)
	b.signIn(t, site.url, "/admin", email)
	require.Equal(t, site.url+"/admin", b.location(t))

	// Every number on the dashboard is what the database holds.
	const blocked = `SELECT count(*) FROM audit_events WHERE action = 'message.duplicate_blocked' AND created_at > now() - $1::interval`
	for _, window := range []struct{ id, interval string }{{"day", "24 hours"}, {"week", "7 days"}} {
		for id, query := range map[string]string{
			"received":            `SELECT count(*) FROM messages WHERE received_at > now() - $1::interval`,
			"blocked":             blocked,
			"blocked-fingerprint": blocked + ` AND details->>'mode' = 'fingerprint'`,
			"blocked-key":         blocked + ` AND details->>'mode' = 'idempotency_key'`,
			"blocked-identical":   blocked + ` AND details->>'content' = 'identical'`,
			"blocked-shape-only":  blocked + ` AND details->>'content' = 'shape_only'`,
			"blocked-changed":     blocked + ` AND details->>'content' = 'changed'`,
		} {
			shown := eval[string](t, b, fmt.Sprintf(`document.querySelector('#%s-%s').textContent`, id, window.id))
			require.Equal(t, fmt.Sprint(site.count(t, query, window.interval)), shown, "%s-%s", id, window.id)
		}
	}
	require.Equal(t, "2", eval[string](t, b, `document.querySelector('#blocked-week').textContent`), "the changed and the identical copy")
	require.Equal(t, "1", eval[string](t, b, `document.querySelector('#blocked-changed-week').textContent`))
	b.screenshot(t, "dashboard")

	// The chart is drawn on the server; its numbers are in the table under it.
	require.Equal(t, 1, eval[int](t, b, `document.querySelectorAll('svg.chart rect').length`), "one bar segment: today's ORDERS05")
	require.Equal(t, "Blocked duplicates per day and message type, last 14 days (UTC)",
		eval[string](t, b, `document.querySelector('svg.chart > title').textContent`))
	today := site.count(t, `SELECT count(*) FROM audit_events WHERE action = 'message.duplicate_blocked'
		AND created_at >= date_trunc('day', now() AT TIME ZONE 'UTC') AT TIME ZONE 'UTC'`)
	require.Equal(t, fmt.Sprint(today), eval[string](t, b, `document.querySelector('#chart-data tbody tr:last-child td.total').textContent`))
	require.Equal(t, []string{"acme / ORDERS05", "1", "2", "66.7 %"},
		eval[[]string](t, b, `Array.from(document.querySelector('tr.top-type').cells, c => c.textContent.trim())`))
	require.Regexp(t, `^/admin/audit\?action=message.duplicate_blocked&from=[0-9T%A-F-]+&message_type=ORDERS05&tenant=acme$`,
		eval[string](t, b, `document.querySelector('tr.top-type a').getAttribute('href')`))

	// The type's link leads to its blocked duplicates, the changed one to its diff.
	b.do(t,
		chromedp.Click(chromedp.CSS(`tr.top-type a`)),
		chromedp.WaitVisible(chromedp.CSS(`tr.event a.diff`)),
	)
	require.Equal(t, 2, eval[int](t, b, `document.querySelectorAll('tr.event').length`))
	b.do(t,
		chromedp.Click(chromedp.CSS(`tr.event a.diff`)),
		chromedp.WaitVisible(chromedp.CSS(`#release-submit`)),
	)
	require.Regexp(t, `/admin/blocked/\d+$`, b.location(t))
	require.Equal(t, changedPaths, eval[[]string](t, b, `Array.from(document.querySelectorAll('#diff td.path'), td => td.textContent)`))
	require.Equal(t, []string{"added"}, eval[[]string](t, b, `Array.from(document.querySelectorAll('#diff tr[data-kind=added] td:first-child'), td => td.textContent)`))

	// Releasing lands on the new message, which says where it came from.
	b.do(t,
		chromedp.SendKeys(chromedp.CSS(`#release-reason`), "corrected order: item 00040 added"),
		chromedp.Click(chromedp.CSS(`#release-submit`)),
		chromedp.WaitVisible(chromedp.CSS(`#release-done`)),
	)
	require.Regexp(t, `/admin/messages/\d+\?released=\d+$`, b.location(t))
	require.Contains(t, eval[string](t, b, `document.querySelector('#released-from').textContent`), "corrected order: item 00040 added")
	require.Equal(t, 2, site.messages(t))

	b.do(t,
		chromedp.Navigate(site.url+"/admin/audit?action=message.duplicate_released"),
		chromedp.WaitVisible(chromedp.CSS(`tr.event`)),
	)
	require.Equal(t, 1, eval[int](t, b, `document.querySelectorAll('tr.event[data-action="message.duplicate_released"]').length`))
	require.Contains(t, eval[string](t, b, `document.querySelector('tr.event').textContent`), "corrected order: item 00040 added")
	require.Zero(t, b.dialogs.Load())
}
