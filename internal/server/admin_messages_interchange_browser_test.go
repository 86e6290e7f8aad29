package server_test

import (
	"fmt"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/require"

	"github.com/lefia/edihub/internal/auth"
	"github.com/lefia/edihub/internal/pgtest"
)

// An admin opens a message that came in an interchange, sees its control
// numbers, and follows the interchange's to its other messages.
func TestBrowserMessageOfAnInterchange(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.messageType(t, "850", []string{"BEG.0.BEG03"}, nil)
	decodeInterchange(t, b.postInterchange(t, readFile(t, "x12_850.edi"), "application/edi-x12"))
	ids := pgtest.Column[int64](t, b.pool, `SELECT id FROM messages ORDER BY id`)
	email := b.user(t, "ops@example.com", auth.RoleAdmin, "")
	br := newBrowser(t)
	br.signIn(t, b.url, fmt.Sprintf("/admin/messages/%d", ids[1]), email)
	br.do(t, chromedp.WaitVisible(chromedp.CSS(`#message-interchange`)))
	require.Equal(t, "0002", eval[string](t, br, `document.querySelector('#message-control-number').textContent`))
	br.requireFitsWidth(t)
	br.screenshot(t, "message-of-interchange")

	br.do(t,
		chromedp.Click(chromedp.CSS(`#interchange-control-number`)),
		chromedp.WaitVisible(chromedp.CSS(`#messages-filter`)),
		chromedp.Poll[chromedp.Void](`document.querySelectorAll('tr.message').length === 2`),
	)
	require.Equal(t, "000000905", eval[string](t, br, `document.querySelector('#filter-control-number').value`))
	br.requireFitsWidth(t)
	br.screenshot(t, "messages-of-interchange")
}
