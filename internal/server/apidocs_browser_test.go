package server_test

import (
	"net/http"
	"testing"

	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/require"
)

// /api/docs renders the OpenAPI document that /api/openapi.yaml serves with
// the vendored Redoc, from the server's own files only (its Content
// Security Policy allows no other origin): the page loads, lists the
// operations and opens one, receive-message, with its responses.
func TestBrowserAPIDocs(t *testing.T) {
	t.Parallel()
	site := setup(t)
	resp := do(t, http.MethodGet, site.url+"/api/docs", nil, nil)
	require.Equal(t, http.StatusOK, resp.status)
	require.Contains(t, resp.header.Get("Content-Security-Policy"), "script-src 'self';")
	require.Contains(t, string(resp.body), `<script src="/static/vendor/redoc.standalone.js">`)

	b := newBrowser(t)
	// Whatever the page would load from elsewhere is refused by its policy
	// and recorded here, from before its first script runs.
	_, err := chromedp.Call(b.ctx, page.AddScriptToEvaluateOnNewDocument, page.AddScriptToEvaluateOnNewDocumentParams{
		Source: `window.refused = []; document.addEventListener('securitypolicyviolation', e => refused.push(e.violatedDirective + ' ' + e.blockedURI))`,
	})
	require.NoError(t, err)
	receiveMessage := `[data-section-id="operation/receiveMessage"]`
	b.do(t,
		chromedp.Navigate(site.url+"/api/docs"),
		chromedp.WaitVisible(chromedp.CSS(receiveMessage+` h2`)),
	)
	require.Equal(t, "edihub", eval[string](t, b, `document.querySelector('.api-info h1').textContent.split(' ')[0]`))
	require.Contains(t, eval[string](t, b, `document.querySelector('`+receiveMessage+` h2').textContent`),
		"Receive one message, an IDoc-XML document of one or more IDocs")
	require.Contains(t, eval[string](t, b, `document.querySelector('`+receiveMessage+`').textContent`), "idempotency-key-reused")
	require.Contains(t, eval[string](t, b, `document.querySelector('.menu-content').textContent`), "Receive a batch of messages")
	// Redoc's own styles applied (the policy lets its style elements in):
	// the menu is a column of its own beside the operations.
	require.Greater(t, eval[int](t, b, `document.querySelector('.menu-content').getBoundingClientRect().width`), 150)
	// Redoc's footer shows Redocly's logo from its CDN; the policy refuses it
	// (and Redoc then leaves the image out), and nothing else is refused:
	// the page works from the server's files alone.
	require.Equal(t, []string{"img-src https://cdn.redoc.ly/redoc/logo-mini.svg"}, eval[[]string](t, b, `refused`))
	require.Zero(t, eval[int](t, b, `document.querySelectorAll('img[alt="redocly logo"]').length`))
	b.screenshot(t, "api-docs")
}
