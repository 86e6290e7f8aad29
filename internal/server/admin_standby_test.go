package server_test

import (
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/require"

	"github.com/lefia/edihub/internal/auth"
	"github.com/lefia/edihub/internal/config"
	"github.com/lefia/edihub/internal/pgtest"
	"github.com/lefia/edihub/internal/server"
	"github.com/lefia/edihub/internal/testfactory"
)

var messageRow = regexp.MustCompile(`<tr class="message"`)

// standbySite is an admin site on a primary whose read-only pages read
// from a real streaming standby (ADMIN_DATABASE_URL).
type standbySite struct {
	*adminSite
	primary, standby *pgtest.Cluster
}

func newStandbySite(t *testing.T) *standbySite {
	t.Helper()
	primary := pgtest.NewCluster(t)
	standby := primary.NewStandby()
	// A formation's standby: intake is acknowledged once it confirms.
	primary.Synchronous(pgtest.StandbySlot)
	databaseURL := primary.MigratedURL()
	cfg, err := config.Load(func(string) string { return "" })
	require.NoError(t, err)
	b := setupWith(t, pgtest.PoolFor(t, databaseURL), cfg, server.WithAdminReads(pgtest.PoolFor(t, standby.Address(databaseURL))))
	site := &standbySite{adminSite: adminSiteOn(t, b), primary: primary, standby: standby}
	standby.WaitReplayed(primary)
	return site
}

// The dashboard, the audit log and the message search read from the
// standby: with its replay paused they show the state before, and say how
// far behind it is. An admin's write goes to the primary, and that admin's
// pages read the primary until the standby has replayed it; another
// admin's pages still read the standby.
func TestAdminPagesReadFromTheStandby(t *testing.T) {
	t.Parallel()
	site := newStandbySite(t)
	writer := site.client(t)
	writer.login(site.user(t, "ops@example.com", auth.RoleAdmin, ""))
	other := site.client(t)
	other.login(site.user(t, "audit@example.com", auth.RoleAdmin, ""))
	site.standby.WaitReplayed(site.primary)
	messages := writer.get("/admin/messages")
	require.Len(t, messageRow.FindAll(messages.body, -1), 2)
	require.NotContains(t, string(messages.body), `id="standby-lag"`, "caught up")

	site.standby.Exec(`SELECT pg_wal_replay_pause()`)
	posted := site.post(t, envelopeFor(t, "ORDERS05", "orders05.json"), "Idempotency-Key", "after-the-pause")
	require.Equal(t, http.StatusCreated, posted.status, "%s", posted.body)
	require.Equal(t, 3, site.messages(t), "on the primary")
	var page string
	require.Eventually(t, func() bool {
		page = string(other.get("/admin/messages").body)
		return strings.Contains(page, `id="standby-lag"`)
	}, 30*time.Second, 250*time.Millisecond, "the lag shows once it passes a few seconds")
	require.Len(t, messageRow.FindAllString(page, -1), 2, "the standby's older state")
	require.Regexp(t, `read from a standby that is <strong>\d+ s</strong> behind the primary`, page)
	for _, path := range []string{"/admin", "/admin/audit"} {
		require.Contains(t, string(other.get(path).body), `id="standby-lag"`, path)
	}

	created := writer.submit("/admin/users", url.Values{"email": {"new@example.com"}, "password": {testfactory.Password}, "role": {"viewer"}})
	require.Equal(t, http.StatusSeeOther, created.status, "the write went to the primary: %s", created.body)
	audit := string(writer.get("/admin/audit?action=user.created").body)
	require.Contains(t, audit, "new@example.com", "right after a write, the writer's pages read the primary")
	require.NotContains(t, audit, `id="standby-lag"`)
	require.NotContains(t, string(other.get("/admin/audit?action=user.created").body), "new@example.com", "the others' still read the standby")

	site.standby.Exec(`SELECT pg_wal_replay_resume()`)
	site.standby.WaitReplayed(site.primary)
	require.Eventually(t, func() bool {
		page = string(other.get("/admin/messages").body)
		return !strings.Contains(page, `id="standby-lag"`)
	}, 10*time.Second, 250*time.Millisecond)
	require.Len(t, messageRow.FindAllString(page, -1), 3)
	require.Contains(t, string(other.get("/admin/audit?action=user.created").body), "new@example.com")
}

// The notice of a lagging standby stands above the page, fits the width,
// and is text.
func TestBrowserStandbyLagNotice(t *testing.T) {
	t.Parallel()
	site := newStandbySite(t)
	email := site.user(t, "ops@example.com", auth.RoleAdmin, "")
	b := newBrowser(t)
	// Signing in writes: its pages read the primary until the standby has
	// replayed that.
	b.signIn(t, site.url, "/admin/messages", email)
	site.standby.WaitReplayed(site.primary)
	site.standby.Exec(`SELECT pg_wal_replay_pause()`)
	site.post(t, envelopeFor(t, "ORDERS05", "orders05.json"), "Idempotency-Key", "after-the-pause")
	require.Eventually(t, func() bool {
		b.do(t, chromedp.Navigate(site.url+"/admin/messages"), chromedp.WaitVisible(chromedp.CSS(`main`)))
		return eval[bool](t, b, `document.getElementById('standby-lag') !== null`)
	}, 30*time.Second, 500*time.Millisecond)
	require.Regexp(t, `^This page was read from a standby that is \d+ s behind the primary: what happened in the last \d+ s may not show yet\.$`,
		strings.Join(strings.Fields(eval[string](t, b, `document.getElementById('standby-lag').textContent`)), " "))
	b.requireFitsWidth(t)
	b.screenshot(t, "standby-lag")
}
