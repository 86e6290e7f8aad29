package server_test

import (
	"context"
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/require"

	"github.com/lefia/edihub/internal/auth"
)

// postpone makes a failed delivery pending again with its next attempt an
// hour away, as after an early failed attempt with a long backoff: its job
// waits, retryable, and will run again.
func (site *deliverySite) postpone(t *testing.T, message int64) int64 {
	t.Helper()
	var id int64
	require.NoError(t, site.pool.QueryRow(context.Background(), `
		UPDATE deliveries SET status = 'pending' WHERE message_id = $1 AND status = 'failed' RETURNING id`, message).Scan(&id))
	_, err := site.pool.Exec(context.Background(), `
		UPDATE river_job SET state = 'retryable', scheduled_at = now() + interval '1 hour', max_attempts = 10, finalized_at = NULL
		WHERE kind = 'delivery' AND args @> jsonb_build_object('delivery_id', $1::bigint)`, id)
	require.NoError(t, err)
	return id
}

// A pending delivery shows when its next attempt is due, and an admin's
// "Retry now" makes it at once; deleting a destination asks first, says
// what it cancels, cancels its pending and failed deliveries (no job makes
// them afterwards) and keeps the delivered one's history.
func TestBrowserDeliveryRetryNowAndDestinationDelete(t *testing.T) {
	t.Parallel()
	site := newDeliverySite(t)
	soon, later := site.postpone(t, site.messages[0]), site.postpone(t, site.messages[1])
	email := site.user(t, "admin@acme.example", auth.RoleAdmin, "acme")
	b := newBrowser(t)
	b.signIn(t, site.url, fmt.Sprintf("/admin/deliveries?destination=%d", site.acmeDest), email)
	next := eval[string](t, b, fmt.Sprintf(`document.querySelector('tr.delivery[data-id="%d"] .next-attempt').textContent`, soon))
	require.Regexp(t, `^\s*next in 59 min \d+ s\s*$`, next)
	require.Equal(t, 2, eval[int](t, b, `document.querySelectorAll('tr.delivery button.retry-now').length`))
	b.snapshot(t, "deliveries-pending-next")

	site.up.Store(true)
	b.do(t,
		chromedp.Click(chromedp.CSS(fmt.Sprintf(`tr.delivery[data-id="%d"] button.retry-now`, soon))),
		chromedp.WaitVisible(chromedp.CSS(`table.deliveries`)),
	)
	require.Equal(t, fmt.Sprintf("%s/admin/deliveries?destination=%d", site.url, site.acmeDest), b.location(t))
	require.Eventually(t, func() bool {
		return site.count(t, `SELECT count(*) FROM deliveries WHERE id = $1 AND status = 'delivered'`, soon) == 1
	}, 30*time.Second, 50*time.Millisecond, "the delivery is made at once")
	require.Equal(t, 1, site.count(t, `SELECT count(*) FROM audit_events WHERE action = 'delivery.retried_now'
		AND details->>'delivery_id' = $1::bigint::text AND actor LIKE 'user:%'`, soon))

	// Delete the destination: its page asks first.
	b.do(t,
		chromedp.Navigate(fmt.Sprintf("%s/admin/destinations/%d", site.url, site.acmeDest)),
		chromedp.Click(chromedp.CSS(`#destination-delete`)),
		chromedp.WaitVisible(chromedp.CSS(`#destination-delete-confirm`)),
	)
	require.Contains(t, eval[string](t, b, `document.querySelector('#delete-pending').textContent`), "1 waiting deliveries")
	require.Equal(t, 1, site.count(t, `SELECT count(*) FROM destinations WHERE id = $1 AND deleted_at IS NULL`, site.acmeDest),
		"nothing is deleted before the confirmation")
	b.requireFitsWidth(t)
	b.screenshot(t, "destination-delete-confirm")
	b.do(t,
		chromedp.Click(chromedp.CSS(`#destination-delete-confirm`)),
		chromedp.WaitVisible(chromedp.CSS(`#destination-deleted`)),
	)
	require.Contains(t, eval[string](t, b, `document.querySelector('#destination-deleted').textContent`),
		fmt.Sprintf("Deleted destination %d: 2 deliveries it still owed are cancelled.", site.acmeDest))
	require.False(t, eval[bool](t, b, fmt.Sprintf(`document.querySelector('tr.destination[data-id="%d"]') !== null`, site.acmeDest)))
	b.screenshot(t, "destination-deleted")

	require.Equal(t, []string{"delivered", "cancelled", "cancelled"}, site.statuses(t, site.acmeDest))
	require.Zero(t, site.count(t, `SELECT count(*) FROM river_job WHERE kind = 'delivery'
		AND args @> jsonb_build_object('delivery_id', $1::bigint) AND state <> 'cancelled'`, later), "its job will not run")
	require.Equal(t, 1, site.count(t, `SELECT count(*) FROM audit_events WHERE action = 'destination.deleted'
		AND (details->>'cancelled_deliveries')::int = 2`))

	// A job that still runs for a cancelled delivery (fetched just before
	// the deletion) sends nothing and ends cancelled.
	received := site.received.Load()
	_, err := site.pool.Exec(context.Background(), `
		UPDATE river_job SET state = 'available', scheduled_at = now(), finalized_at = NULL
		WHERE kind = 'delivery' AND args @> jsonb_build_object('delivery_id', $1::bigint)`, later)
	require.NoError(t, err)
	b.do(t, chromedp.Navigate(fmt.Sprintf("%s/admin/deliveries?destination=%d", site.url, site.acmeDest)),
		chromedp.WaitVisible(chromedp.CSS(`table.deliveries`)))
	require.Equal(t, 2, eval[int](t, b, `document.querySelectorAll('tr.delivery[data-status="cancelled"]').length`))
	require.Zero(t, eval[int](t, b, `document.querySelectorAll('tr.delivery button').length`), "nothing to retry")
	b.snapshot(t, "deliveries-cancelled")
	require.Equal(t, received, site.received.Load())
	require.Equal(t, "cancelled", site.statuses(t, site.acmeDest)[1])

	// New messages are delivered to it no more; its page is gone.
	site.postMessage(t, site.apiKey, 7)
	require.Len(t, site.statuses(t, site.acmeDest), 3)
	c := site.client(t)
	c.login(email)
	require.Equal(t, http.StatusNotFound, c.get(fmt.Sprintf("/admin/destinations/%d", site.acmeDest)).status)
	require.Zero(t, b.dialogs.Load())
}

// statuses are the statuses of a destination's deliveries, in id order.
func (site *deliverySite) statuses(t *testing.T, destination int64) []string {
	t.Helper()
	rows, err := site.pool.Query(context.Background(), `SELECT status FROM deliveries WHERE destination_id = $1 ORDER BY id`, destination)
	require.NoError(t, err)
	var out []string
	for rows.Next() {
		var s string
		require.NoError(t, rows.Scan(&s))
		out = append(out, s)
	}
	require.NoError(t, rows.Err())
	return out
}
