package server_test

import (
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/require"

	"github.com/lefia/edihub/internal/auth"
)

// An admin pastes an X12 interchange into the editor's sample and sees
// what a path reads from each of its transaction sets.
func TestBrowserTypeEditorPreviewsAnInterchange(t *testing.T) {
	t.Parallel()
	site := newAdminSite(t)
	email := site.user(t, "admin@acme.example", auth.RoleAdmin, "")
	id := site.typeID(t, "acme", "ORDERS05")
	b := newBrowser(t)
	b.signIn(t, site.url, pagePath(id), email)
	b.do(t,
		chromedp.WaitVisible(chromedp.CSS(`#impact-summary`)),
		chromedp.SetValue(chromedp.CSS(`#sample-payload`), string(readFile(t, "x12_850.edi"))),
		chromedp.SetValue(chromedp.CSS(`#path-0`), "BEG.0.BEG0"),
		chromedp.SendKeys(chromedp.CSS(`#path-0`), "3"),
		chromedp.Poll[chromedp.Void](`document.querySelectorAll('#preview article.preview-set').length === 2`),
		htmxSettled,
	)
	require.Equal(t, []string{`"PO-4711"`, `"PO-4712"`}, eval[[]string](t, b,
		`Array.from(document.querySelectorAll('#preview article.preview-set tr.preview-value td:nth-child(2)'), c => c.textContent.trim())`))
	b.requireFitsWidth(t)
	b.screenshot(t, "admin_type_editor_interchange")
}
