package server_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/require"

	"github.com/lefia/edihub/internal/auth"
)

// An admin creates a destination, first on a refused address, then on an
// allowed one, reads its signing secret once, edits it, pauses it and
// resumes it.
func TestBrowserAdminManagesDestinations(t *testing.T) {
	t.Parallel()
	site := newDeliverySite(t)
	// acme's destination has fallen behind: its three deliveries wait, the
	// oldest for ten minutes; globex's has made its one in the last minute.
	_, err := site.pool.Exec(t.Context(), `UPDATE deliveries SET status = 'pending',
		created_at = now() - interval '10 minutes' + id * interval '1 second' WHERE destination_id = $1`, site.acmeDest)
	require.NoError(t, err)
	_, err = site.pool.Exec(t.Context(), `UPDATE deliveries SET status = 'delivered', delivered_at = now() - interval '5 seconds'
		WHERE destination_id = $1`, site.globexDest)
	require.NoError(t, err)
	email := site.user(t, "admin@example.com", auth.RoleAdmin, "")
	b := newBrowser(t)
	b.signIn(t, site.url, "/admin/destinations", email)
	require.Equal(t, 2, eval[int](t, b, `document.querySelectorAll('tr.destination').length`))
	queue := func(id int64) []string {
		return eval[[]string](t, b, fmt.Sprintf(`Array.from(document.querySelectorAll('tr.destination[data-id="%d"] td.pending, tr.destination[data-id="%d"] td.oldest, tr.destination[data-id="%d"] td.rate'), c => c.textContent.trim())`, id, id, id))
	}
	acme := queue(site.acmeDest)
	require.Equal(t, "3", acme[0])
	require.Regexp(t, `^(9|10) min \d+ s$`, acme[1])
	require.Equal(t, "0.0", acme[2])
	require.Equal(t, 1, eval[int](t, b, fmt.Sprintf(`document.querySelectorAll('tr.destination[data-id="%d"] td.oldest .late').length`, site.acmeDest)),
		"a queue behind is marked")
	require.Equal(t, []string{"0", "–", "<0.1"}, queue(site.globexDest))
	b.screenshot(t, "destinations")

	b.do(t,
		chromedp.Click(chromedp.CSS(`#new-destination`)),
		chromedp.WaitVisible(chromedp.CSS(`#destination-form`)),
		chromedp.SetValue(chromedp.CSS(`#destination-place`), "acme/production"),
		chromedp.SendKeys(chromedp.CSS(`#destination-url`), "http://169.254.169.254/latest/meta-data/"),
		chromedp.SendKeys(chromedp.CSS(`#destination-types`), "ORDERS05"),
		chromedp.Click(chromedp.CSS(`#destination-submit`)),
		chromedp.WaitVisible(chromedp.CSS(`#destination-problem`)),
	)
	problem := eval[string](t, b, `document.querySelector('#destination-problem').textContent`)
	require.Contains(t, problem, "169.254.169.254 is a link-local address (DESTINATION_ALLOWED_CIDRS can open it)")
	require.Equal(t, "ORDERS05", eval[string](t, b, `document.querySelector('#destination-types').value`), "the form keeps what was typed")
	b.screenshot(t, "destination-refused")

	b.do(t,
		chromedp.SetValue(chromedp.CSS(`#destination-url`), "https://93.184.215.14/edihub"),
		chromedp.Click(chromedp.CSS(`#destination-submit`)),
		chromedp.WaitVisible(chromedp.CSS(`#secret-once`)),
	)
	secret := eval[string](t, b, `document.querySelector('#destination-secret-value').textContent`)
	require.Regexp(t, `^whsec_[A-Za-z0-9+/=]{40,}$`, secret)
	b.screenshot(t, "destination-created")
	var id int64
	require.NoError(t, site.pool.QueryRow(t.Context(), `SELECT id FROM destinations WHERE secret = $1`, secret).Scan(&id))

	b.do(t,
		chromedp.Click(chromedp.CSS(`#to-destinations`)),
		chromedp.WaitVisible(chromedp.CSS(`table.destinations`)),
	)
	require.NotContains(t, eval[string](t, b, `document.body.innerHTML`), secret, "the secret is shown once")
	row := fmt.Sprintf(`tr.destination[data-id="%d"]`, id)
	require.Equal(t, []string{"acme / production", "https://93.184.215.14/edihub", "ORDERS05", "8", "active"},
		eval[[]string](t, b, fmt.Sprintf(`Array.from(document.querySelector('%s').cells, c => c.textContent.trim()).slice(1, 6)`, row)))

	// Edit: every type, two at once.
	b.do(t,
		chromedp.Click(chromedp.CSS(row+` a.edit-destination`)),
		chromedp.WaitVisible(chromedp.CSS(`#destination-form`)),
	)
	b.screenshot(t, "destination-edit")
	b.do(t,
		chromedp.Clear(chromedp.CSS(`#destination-types`)),
		chromedp.Clear(chromedp.CSS(`#destination-concurrency`)),
		chromedp.SendKeys(chromedp.CSS(`#destination-concurrency`), "2"),
		chromedp.Click(chromedp.CSS(`#destination-submit`)),
		chromedp.WaitVisible(chromedp.CSS(`#destination-saved`)),
	)
	require.True(t, strings.HasSuffix(b.location(t), fmt.Sprintf("/admin/destinations?saved=%d", id)))
	require.Equal(t, []string{"every type", "2", "active"},
		eval[[]string](t, b, fmt.Sprintf(`Array.from(document.querySelector('%s').cells, c => c.textContent.trim()).slice(3, 6)`, row)))

	// Pause, then resume.
	b.do(t,
		chromedp.Click(chromedp.CSS(row+` button.pause`)),
		chromedp.WaitVisible(chromedp.CSS(row+`[data-paused="true"] button.resume`)),
	)
	require.Equal(t, "paused", eval[string](t, b, fmt.Sprintf(`document.querySelector('%s td.state').textContent.trim()`, row)))
	require.Equal(t, 1, site.count(t, `SELECT count(*) FROM river_queue WHERE name = $1 AND paused_at IS NOT NULL`, fmt.Sprintf("destination_%d", id)),
		"the destination's queue is paused for every worker process")
	b.screenshot(t, "destinations-paused")
	b.do(t,
		chromedp.Click(chromedp.CSS(row+` button.resume`)),
		chromedp.WaitVisible(chromedp.CSS(row+`[data-paused="false"] button.pause`)),
	)
	require.Equal(t, 4, site.count(t, `SELECT count(*) FROM audit_events
		WHERE action IN ('destination.created', 'destination.updated', 'destination.paused', 'destination.resumed') AND actor LIKE 'user:%'`))
	require.Zero(t, b.dialogs.Load())
}
