package server_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/require"

	"github.com/lefia/edihub/internal/auth"
)

// An admin creates a Slack channel, first on a refused address, then on a
// receiver that answers 404, tests it and reads the answer; then a webhook
// channel whose test is taken, renames it and deletes the first.
func TestBrowserAdminManagesChannels(t *testing.T) {
	t.Parallel()
	site := newChannelSite(t)
	gone := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.WriteHeader(http.StatusNotFound)
		_, _ = io.WriteString(w, "no_service")
	}))
	defer gone.Close()
	hook := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		_, _ = io.WriteString(w, `{"received":true}`)
	}))
	defer hook.Close()
	site.channel(t, "globex", "email", "ops@globex.example")
	email := site.user(t, "admin@acme.example", auth.RoleAdmin, "acme")
	b := newBrowser(t)
	b.signIn(t, site.url, "/admin/channels", email)
	require.True(t, eval[bool](t, b, `!!document.querySelector('#no-channels')`), "globex's channel is not acme's to see")
	require.Equal(t, "Channels", eval[string](t, b, `document.querySelector('nav.sections a[aria-current=page]').textContent`))

	b.do(t,
		chromedp.Click(chromedp.CSS(`#new-channel`)),
		chromedp.WaitVisible(chromedp.CSS(`#channel-form`)),
		chromedp.SetValue(chromedp.CSS(`#channel-kind`), "slack"),
		chromedp.SendKeys(chromedp.CSS(`#channel-target`), "http://169.254.169.254/latest/meta-data/"),
		chromedp.SendKeys(chromedp.CSS(`#channel-name`), "#edi-alerts"),
		chromedp.Click(chromedp.CSS(`#channel-submit`)),
		chromedp.WaitVisible(chromedp.CSS(`#channel-problem`)),
	)
	require.Contains(t, eval[string](t, b, `document.querySelector('#channel-problem').textContent`),
		"169.254.169.254 is a link-local address (DESTINATION_ALLOWED_CIDRS can open it)")
	require.Equal(t, "#edi-alerts", eval[string](t, b, `document.querySelector('#channel-name').value`), "the form keeps what was typed")
	require.Equal(t, "slack", eval[string](t, b, `document.querySelector('#channel-kind').value`))
	b.requireFitsWidth(t)
	b.screenshot(t, "channel-refused")

	b.do(t,
		chromedp.SetValue(chromedp.CSS(`#channel-target`), gone.URL+"/services/T0/B0/gone"),
		chromedp.Click(chromedp.CSS(`#channel-submit`)),
		chromedp.WaitVisible(chromedp.CSS(`#to-channel`)),
	)
	require.False(t, eval[bool](t, b, `!!document.querySelector('#secret-once')`), "a Slack channel has no secret")
	b.do(t,
		chromedp.Click(chromedp.CSS(`#to-channel`)),
		chromedp.WaitVisible(chromedp.CSS(`#channel-test`)),
		chromedp.Click(chromedp.CSS(`#channel-test`)),
		chromedp.WaitVisible(chromedp.CSS(`#test-answer`)),
	)
	require.Equal(t, "false", eval[string](t, b, `document.querySelector('#test-answer').dataset.ok`))
	require.Equal(t, "HTTP 404 Not Found: no_service", eval[string](t, b, `document.querySelector('#test-said').textContent`))
	require.Equal(t, "the channel answered 404 Not Found", eval[string](t, b, `document.querySelector('#test-error').textContent`))
	require.Equal(t, []string{"test channel.test", "failed", "1"},
		eval[[]string](t, b, `Array.from(document.querySelector('tr.notification').cells, c => c.textContent.trim().replace(/\s+/g, ' ')).filter((_, i) => [1, 3, 4].includes(i))`))
	b.requireFitsWidth(t)
	b.screenshot(t, "channel-test-failed")
	slackPage := b.location(t)
	require.Regexp(t, `/admin/channels/[0-9]+$`, slackPage, "the test's answer is shown where the channel's page is")

	// A webhook channel: its secret once, then a test it takes.
	b.do(t,
		chromedp.Navigate(site.url+"/admin/channels/new"),
		chromedp.WaitVisible(chromedp.CSS(`#channel-form`)),
		chromedp.SetValue(chromedp.CSS(`#channel-kind`), "webhook"),
		chromedp.SendKeys(chromedp.CSS(`#channel-target`), hook.URL+"/edihub-alerts"),
		chromedp.Click(chromedp.CSS(`#channel-submit`)),
		chromedp.WaitVisible(chromedp.CSS(`#secret-once`)),
	)
	secret := eval[string](t, b, `document.querySelector('#channel-secret-value').textContent`)
	require.Regexp(t, `^whsec_[A-Za-z0-9+/=]{40,}$`, secret)
	b.screenshot(t, "channel-created")
	b.do(t,
		chromedp.Click(chromedp.CSS(`#to-channel`)),
		chromedp.WaitVisible(chromedp.CSS(`#channel-test`)),
		chromedp.Click(chromedp.CSS(`#channel-test`)),
		chromedp.WaitVisible(chromedp.CSS(`#test-answer`)),
	)
	require.Equal(t, "true", eval[string](t, b, `document.querySelector('#test-answer').dataset.ok`))
	require.Equal(t, `HTTP 200 OK: {"received":true}`, eval[string](t, b, `document.querySelector('#test-said').textContent`))
	require.NotContains(t, eval[string](t, b, `document.body.innerHTML`), secret, "the secret is shown once")
	b.screenshot(t, "channel-test-sent")

	b.do(t,
		chromedp.SetValue(chromedp.CSS(`#channel-name`), "Pager"),
		chromedp.Click(chromedp.CSS(`#channel-submit`)),
	)
	require.Eventually(t, func() bool {
		return eval[bool](t, b, `!!document.querySelector('#channel-saved')`)
	}, 10*time.Second, 50*time.Millisecond)
	require.Equal(t, "Pager", eval[string](t, b, `document.querySelector('h1').textContent`))

	b.do(t,
		chromedp.Navigate(slackPage),
		chromedp.WaitVisible(chromedp.CSS(`#channel-delete`)),
		chromedp.Click(chromedp.CSS(`#channel-delete`)),
		chromedp.WaitVisible(chromedp.CSS(`#channel-deleted`)),
	)
	require.Equal(t, []string{"Pager"}, eval[[]string](t, b, `Array.from(document.querySelectorAll('tr.channel a.open-channel'), a => a.textContent)`))
	require.Equal(t, "acme", eval[string](t, b, `document.querySelector('tr.channel').cells[2].textContent`))
	b.requireFitsWidth(t)
	b.screenshot(t, "channels")
	require.Equal(t, 4, site.count(t, `SELECT count(*) FROM audit_events
		WHERE action IN ('channel.created', 'channel.updated', 'channel.deleted') AND actor LIKE 'user:%'`),
		"created twice, renamed, deleted")
	require.Zero(t, b.dialogs.Load())
}
