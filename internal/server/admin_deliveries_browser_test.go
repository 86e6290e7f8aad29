package server_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/require"

	"github.com/lefia/edihub/internal/auth"
)

// An admin filters the deliveries to the failed ones, reads a message's
// attempts, retries one delivery from the message page and the rest in a
// bulk replay, whose notice says how many it queued once it is done.
func TestBrowserAdminRetriesFailedDeliveries(t *testing.T) {
	t.Parallel()
	site := newDeliverySite(t)
	email := site.user(t, "admin@example.com", auth.RoleAdmin, "")
	b := newBrowser(t)
	b.signIn(t, site.url, "/admin/deliveries", email)
	require.Equal(t, 4, eval[int](t, b, `document.querySelectorAll('tr.delivery').length`))

	// The filter goes into the URL, and htmx swaps the results in.
	b.do(t,
		chromedp.SetValue(chromedp.CSS(`#filter-status`), "failed"),
		chromedp.SetValue(chromedp.CSS(`#filter-destination`), fmt.Sprint(site.acmeDest)),
		chromedp.SendKeys(chromedp.CSS(`#filter-message-type`), "ORDERS05"),
		chromedp.Click(chromedp.CSS(`#apply-filter`)),
		chromedp.Poll[chromedp.Void](fmt.Sprintf(`location.search === "?destination=%d&message_type=ORDERS05&status=failed"`, site.acmeDest)),
		chromedp.Poll[chromedp.Void](`document.querySelectorAll('tr.delivery').length === 3`),
	)
	require.Equal(t, 3, eval[int](t, b, `document.querySelectorAll('tr.delivery[data-status="failed"] button.retry-one').length`))
	require.Equal(t, "502", eval[string](t, b, `document.querySelector('tr.delivery td.answer').firstChild.textContent.trim()`))
	b.screenshot(t, "deliveries-failed")

	// The message page lists the delivery's two attempts.
	message := site.messages[0]
	b.do(t,
		chromedp.Click(chromedp.CSS(fmt.Sprintf(`tr.delivery a.message[href="/admin/messages/%d"]`, message))),
		chromedp.WaitVisible(chromedp.CSS(`#deliveries article.delivery`)),
	)
	attempts := eval[[][]string](t, b, `Array.from(document.querySelectorAll('#deliveries tr.attempt'), r => Array.from(r.cells, c => c.textContent.trim()))`)
	require.Len(t, attempts, 2)
	for i, a := range attempts {
		require.Equal(t, fmt.Sprint(i+1), a[0])
		require.Regexp(t, `^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d$`, a[1])
		require.Equal(t, "502", a[2])
		require.Regexp(t, `^\d+ ms$`, a[3])
		require.Equal(t, "the destination answered 502 Bad Gateway", a[4])
		require.Equal(t, `{"error":"the ERP is down for maintenance"}`, a[5])
	}
	b.screenshot(t, "message-deliveries-failed")

	// Retry this one from the message page: the page comes back, and the
	// delivery is made.
	site.up.Store(true)
	b.do(t,
		chromedp.Click(chromedp.CSS(`#deliveries button.retry-one`)),
		chromedp.WaitVisible(chromedp.CSS(`#deliveries article.delivery[data-status="pending"], #deliveries article.delivery[data-status="delivered"]`)),
	)
	require.True(t, strings.HasSuffix(b.location(t), fmt.Sprintf("/admin/messages/%d", message)))
	require.Eventually(t, func() bool { return site.received.Load() == 1 }, 30*time.Second, 50*time.Millisecond)
	b.do(t,
		chromedp.Reload(),
		chromedp.WaitVisible(chromedp.CSS(`#deliveries article.delivery[data-status="delivered"]`)),
	)
	require.Equal(t, []string{"1", "2", "3"},
		eval[[]string](t, b, `Array.from(document.querySelectorAll('#deliveries tr.attempt td:first-child'), c => c.textContent)`),
		"a retry's attempts are numbered after the earlier ones")
	require.Equal(t, "200", eval[string](t, b, `document.querySelector('#deliveries tr.attempt:last-child td.answer').textContent`))
	require.Equal(t, "thanks", eval[string](t, b, `document.querySelector('#deliveries tr.attempt:last-child td.snippet').textContent`))
	b.screenshot(t, "message-deliveries-delivered")

	// Back to the filtered list; retry every failed delivery that matches.
	b.do(t,
		chromedp.Navigate(fmt.Sprintf("%s/admin/deliveries?destination=%d&status=failed", site.url, site.acmeDest)),
		chromedp.WaitVisible(chromedp.CSS(`#retry-matching-submit`)),
	)
	require.Equal(t, 2, eval[int](t, b, `document.querySelectorAll('tr.delivery[data-status="failed"]').length`))
	b.do(t,
		chromedp.Click(chromedp.CSS(`#retry-matching-submit`)),
		chromedp.WaitVisible(chromedp.CSS(`#replay`)),
		// The notice follows the replay in the background until it is done.
		chromedp.Poll[chromedp.Void](`document.querySelector('#replay[data-done="true"]') !== null`),
	)
	require.Regexp(t, `^Replay \d+ queued 2 failed deliveries for a new round of attempts\.$`,
		strings.TrimSpace(eval[string](t, b, `document.querySelector('#replay').textContent`)))
	require.Contains(t, b.location(t), fmt.Sprintf("destination=%d", site.acmeDest), "the filter is kept")
	b.screenshot(t, "deliveries-replayed")
	site.waitSettled(t)
	require.Equal(t, int64(3), site.received.Load())
	require.Equal(t, 1, site.count(t, `SELECT count(*) FROM deliveries WHERE status = 'failed'`), "globex's is not in the filter")
	require.Zero(t, b.dialogs.Load())
}
