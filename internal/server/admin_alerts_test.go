package server_test

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/lefia/edihub/internal/auth"
	"github.com/lefia/edihub/internal/pgtest"
	"github.com/lefia/edihub/internal/testfactory"
)

// alertSite is a server with alerts of two tenants and a global one, as
// the evaluator leaves them: acme's destination failing (open) and its
// deliveries lagging (resolved), globex's key refused (open), the traffic
// rollup failing (global, open).
type alertSite struct {
	*testBundle
	acmeOpen, acmeResolved, globexOpen, global int64
}

func newAlertSite(t *testing.T) *alertSite {
	t.Helper()
	site := &alertSite{testBundle: setup(t)}
	globex, _ := testfactory.TenantWithEnvironment(t, site.pool, "globex")
	var acmeID int64
	require.NoError(t, site.pool.QueryRow(context.Background(), `SELECT id FROM tenants WHERE slug = 'acme'`).Scan(&acmeID))
	insert := func(tenantID *int64, rule, kind, key, state, title string, opened time.Time) int64 {
		var id int64
		require.NoError(t, site.pool.QueryRow(context.Background(), `
			INSERT INTO alerts (tenant_id, rule, subject_kind, subject_key, state, title, details, opened_at, last_notified_at,
			                    resolved_at)
			VALUES ($1, $2, $3, $4, $5, $6, jsonb_build_object('lines', jsonb_build_array('tenant ' || $6::text, 'since then')),
			        $7, $7, CASE WHEN $5 = 'resolved' THEN $7::timestamptz + interval '1 hour' END)
			RETURNING id`, tenantID, rule, kind, key, state, title, opened).Scan(&id))
		return id
	}
	now := time.Now()
	site.acmeResolved = insert(&acmeID, "delivery.lagging", "destination", "1", "resolved",
		"Deliveries to destination #1 of acme/production are lagging", now.Add(-3*time.Hour))
	site.acmeOpen = insert(&acmeID, "destination.failing", "destination", "1", "open",
		"Destination #1 of acme/production is failing <script>alert(1)</script>", now.Add(-time.Hour))
	site.globexOpen = insert(&globex.ID, "intake.refusing", "api_key", "9", "open",
		"Requests of API key #9 of globex are refused", now.Add(-2*time.Hour))
	site.global = insert(nil, "housekeeping.failing", "housekeeping", "rollup", "open",
		"The traffic rollup failed 3 rounds in a row", now.Add(-30*time.Minute))
	// The acme alert was told to acme's channel and to a global one.
	_, err := site.pool.Exec(context.Background(), `
		WITH channels AS (
			INSERT INTO notification_channels (tenant_id, kind, name, target)
			VALUES ($1, 'email', 'acme on call', 'oncall@acme.example'), (NULL, 'email', 'hub operators', 'ops@example.com')
			RETURNING id)
		INSERT INTO notifications (channel_id, alert_id, event, rule, title, body, status, attempts, sent_at)
		SELECT id, $2, 'opened', 'destination.failing', 't', 'b', 'sent', 1, now() FROM channels`, acmeID, site.acmeOpen)
	require.NoError(t, err)
	return site
}

var alertRow = regexp.MustCompile(`<tr class="alert" data-id="(\d+)"`)

func alertIDs(body []byte) []string {
	var ids []string
	for _, m := range alertRow.FindAllSubmatch(body, -1) {
		ids = append(ids, string(m[1]))
	}
	return ids
}

// A tenant's users see their tenant's alerts, never another's nor a global
// one; a global user sees all and filters them in the URL.
func TestAlertsPageIsScopedAndFiltered(t *testing.T) {
	t.Parallel()
	site := newAlertSite(t)
	acme := site.client(t)
	acme.login(site.user(t, "admin@acme.example", auth.RoleAdmin, "acme"))
	resp := acme.get("/admin/alerts")
	require.Equal(t, http.StatusOK, resp.status)
	require.Equal(t, []string{fmt.Sprint(site.acmeOpen), fmt.Sprint(site.acmeResolved)}, alertIDs(resp.body))
	require.NotContains(t, string(resp.body), "<script>alert(1)</script>", "titles are escaped")
	require.Contains(t, string(resp.body), "&lt;script&gt;")
	for _, id := range []int64{site.globexOpen, site.global} {
		require.Equal(t, http.StatusNotFound, acme.get(fmt.Sprintf("/admin/alerts/%d", id)).status)
	}
	require.Contains(t, string(acme.get("/admin/alerts?tenant=globex").body), `there is no tenant &#34;globex&#34;`)
	own := string(acme.get(fmt.Sprintf("/admin/alerts/%d", site.acmeOpen)).body)
	require.Contains(t, own, "acme on call")
	require.NotContains(t, own, "hub operators", "a tenant's users do not see the global channels")
	dashboard := acme.get("/admin").body
	require.Contains(t, string(dashboard), fmt.Sprintf(`href="/admin/alerts/%d"`, site.acmeOpen))
	require.NotContains(t, string(dashboard), fmt.Sprintf(`href="/admin/alerts/%d"`, site.globexOpen))
	require.NotContains(t, string(dashboard), fmt.Sprintf(`href="/admin/alerts/%d"`, site.acmeResolved), "resolved ones are not at the top")

	global := site.client(t)
	global.login(site.user(t, "ops@example.com", auth.RoleAdmin, ""))
	require.Equal(t, []string{fmt.Sprint(site.global), fmt.Sprint(site.acmeOpen), fmt.Sprint(site.globexOpen), fmt.Sprint(site.acmeResolved)},
		alertIDs(global.get("/admin/alerts").body))
	require.Equal(t, []string{fmt.Sprint(site.acmeResolved)}, alertIDs(global.get("/admin/alerts?state=resolved").body))
	require.Equal(t, []string{fmt.Sprint(site.globexOpen)}, alertIDs(global.get("/admin/alerts?tenant=globex").body))
	require.Equal(t, []string{fmt.Sprint(site.global)}, alertIDs(global.get("/admin/alerts?rule=housekeeping.failing").body))
	require.Equal(t, []string{fmt.Sprint(site.global), fmt.Sprint(site.acmeOpen)},
		alertIDs(global.get("/admin/alerts?from="+url.QueryEscape(time.Now().Add(-90*time.Minute).UTC().Format("2006-01-02 15:04"))).body))
	require.Contains(t, string(global.get("/admin/alerts?state=closed").body), `&#34;closed&#34; is not an alert state`)
	require.Len(t, regexp.MustCompile(`<tr class="notification"`).FindAll(global.get(fmt.Sprintf("/admin/alerts/%d", site.acmeOpen)).body, -1), 2)
	page := global.get(fmt.Sprintf("/admin/alerts/%d", site.global))
	require.Equal(t, http.StatusOK, page.status)
	require.Contains(t, string(page.body), "The traffic rollup failed 3 rounds in a row")
}

// Acknowledging is one post with the CSRF token, by an admin of the
// alert's tenant; a viewer, a forged post and another tenant's admin
// change nothing.
func TestAcknowledgeAlert(t *testing.T) {
	t.Parallel()
	site := newAlertSite(t)
	acknowledged := func(id int64) bool {
		return pgtest.Count(t, site.pool, `SELECT count(*) FROM alerts WHERE id = $1 AND state = 'acknowledged'`, id) == 1
	}
	path := fmt.Sprintf("/admin/alerts/%d/acknowledge", site.acmeOpen)

	viewer := site.client(t)
	viewer.login(site.user(t, "viewer@acme.example", auth.RoleViewer, "acme"))
	require.NotContains(t, string(viewer.get("/admin/alerts").body), "acknowledge-one", "viewers get no button")
	require.Equal(t, http.StatusForbidden, viewer.submit(path, url.Values{}).status)

	globex := site.client(t)
	globex.login(site.user(t, "admin@globex.example", auth.RoleAdmin, "globex"))
	globex.get("/admin/alerts")
	resp := globex.submit(path, url.Values{})
	require.Equal(t, http.StatusConflict, resp.status, "said as for an alert that is not open")

	admin := site.client(t)
	admin.login(site.user(t, "admin@acme.example", auth.RoleAdmin, "acme"))
	admin.get("/admin/alerts?state=open")
	require.Equal(t, http.StatusForbidden, admin.post(path, url.Values{}).status, "no CSRF token")
	require.False(t, acknowledged(site.acmeOpen))

	resp = admin.submit(path, url.Values{"back": {"/admin/alerts?state=open"}})
	require.Equal(t, http.StatusSeeOther, resp.status, "%s", resp.body)
	require.Equal(t, "/admin/alerts?state=open", resp.header.Get("Location"))
	require.True(t, acknowledged(site.acmeOpen))
	require.Equal(t, 1, site.count(t, `SELECT count(*) FROM audit_events WHERE action = 'alert.acknowledged' AND details->>'alert_id' = $1`,
		fmt.Sprint(site.acmeOpen)))
	require.Equal(t, http.StatusConflict, admin.submit(path, url.Values{}).status, "once")
	require.Contains(t, string(admin.get(fmt.Sprintf("/admin/alerts/%d", site.acmeOpen)).body), "admin@acme.example")

	resp = admin.submit(fmt.Sprintf("/admin/alerts/%d/acknowledge", site.acmeResolved), url.Values{"back": {"https://evil.example/"}})
	require.Equal(t, http.StatusConflict, resp.status, "a resolved alert is not acknowledged")
}

// A destination auto-pause paused says so on the destinations page, and
// one click resumes it, which resolves its alert at the next round.
func TestAutoPausedDestinationResumesInOneClick(t *testing.T) {
	t.Parallel()
	b := setup(t)
	id := b.destination(t, "http://127.0.0.1:9/in")
	_, err := b.pool.Exec(context.Background(), `UPDATE destinations SET paused = true, auto_paused_at = now() WHERE id = $1`, id)
	require.NoError(t, err)
	c := b.client(t)
	c.login(b.user(t, "admin@acme.example", auth.RoleAdmin, "acme"))
	page := string(c.get("/admin/destinations").body)
	require.Contains(t, page, "paused: failing")
	resp := c.submit(fmt.Sprintf("/admin/destinations/%d/resume", id), url.Values{})
	require.Equal(t, http.StatusSeeOther, resp.status, "%s", resp.body)
	require.Equal(t, 1, b.count(t, `SELECT count(*) FROM destinations WHERE id = $1 AND NOT paused AND auto_paused_at IS NULL`, id))
	require.NotContains(t, string(c.get("/admin/destinations").body), "paused: failing")
}
