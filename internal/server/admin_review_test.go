package server_test

import (
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/lefia/edihub/internal/auth"
	"github.com/lefia/edihub/internal/blocked"
	"github.com/lefia/edihub/internal/testfactory"
)

// An admin dismisses a changed copy with a reason: the copy leaves the
// open queue for the dismissed one, the decision is an audit event about
// the original, and the copy can be decided no further.
func TestDismissTakesACopyOffTheQueue(t *testing.T) {
	t.Parallel()
	site := newChangedCopySite(t)
	admin := site.user(t, "admin@acme.example", auth.RoleAdmin, "acme")
	path := fmt.Sprintf("/admin/blocked/%d", site.copyID)
	c := site.client(t)
	c.login(admin)

	queue := c.get("/admin/review")
	require.Equal(t, http.StatusOK, queue.status)
	require.Contains(t, string(queue.body), fmt.Sprintf(`<tr class="copy" data-state="open" data-id="%d">`, site.copyID))
	require.Contains(t, string(queue.body), `<span class="count" id="open-reviews" title="1 changed copies await a decision">1</span>`)

	page := c.get(path)
	require.Contains(t, string(page.body), `id="dismiss-submit"`)
	resp := c.submit(path+"/dismiss", url.Values{"reason": {"  "}})
	require.Equal(t, http.StatusBadRequest, resp.status)
	require.Contains(t, string(resp.body), `<p role="alert" class="problem" id="dismiss-problem">say in 1 to 1000 characters why this copy is a duplicate after all</p>`)

	resp = c.submit(path+"/dismiss", url.Values{"reason": {"repeat output, new date only"}})
	require.Equal(t, http.StatusSeeOther, resp.status, "%s", resp.body)
	require.Equal(t, path+"?dismissed=1", resp.header.Get("Location"))
	page = c.get(path + "?dismissed=1")
	require.Contains(t, string(page.body), `id="dismissed"`)
	require.Contains(t, string(page.body), "Reviewed and left blocked by admin@acme.example")
	require.NotContains(t, string(page.body), `id="dismiss-submit"`)
	require.NotContains(t, string(page.body), `id="release-submit"`)
	require.NotContains(t, string(page.body), `id="open-reviews"`, "nothing awaits a decision")

	require.Equal(t, 1, site.count(t, `SELECT count(*) FROM blocked_copies
		WHERE review_state = 'dismissed' AND dismiss_reason = 'repeat output, new date only'`))
	require.Equal(t, 1, site.count(t, `SELECT count(*) FROM audit_events
		WHERE action = 'message.duplicate_dismissed' AND actor LIKE 'user:%' AND message_id = $1
		  AND details->>'reason' = 'repeat output, new date only' AND (details->>'copy_id')::bigint = $2
		  AND details->>'admin_email' = 'admin@acme.example'`, site.original, site.copyID))

	// Decided once: neither a second dismissal nor a release.
	resp = c.submit(path+"/dismiss", url.Values{"reason": {"again"}})
	require.Equal(t, http.StatusConflict, resp.status)
	require.Contains(t, string(resp.body), "this copy was already dismissed as reviewed")
	resp = c.submit(path+"/release", url.Values{"reason": {"changed my mind"}})
	require.Equal(t, http.StatusConflict, resp.status)
	require.Equal(t, 1, site.messages(t))

	queue = c.get("/admin/review")
	require.Contains(t, string(queue.body), `No changed copy awaits a decision.`)
	queue = c.get("/admin/review?state=dismissed")
	require.Contains(t, string(queue.body), fmt.Sprintf(`<tr class="copy" data-state="dismissed" data-id="%d">`, site.copyID))
	require.Contains(t, string(queue.body), `repeat output, new date only`)
	queue = c.get("/admin/review?state=released")
	require.Contains(t, string(queue.body), `No copies match this filter.`)
	queue = c.get("/admin/review?state=bogus")
	require.Contains(t, string(queue.body), `&#34;bogus&#34; is not a review state`)
}

// Viewers read the queue and the copy but decide nothing; an admin of
// another tenant neither sees the copy nor decides it; a post without the
// CSRF token is refused.
func TestDismissNeedsAnAdminOfTheTenant(t *testing.T) {
	t.Parallel()
	site := newChangedCopySite(t)
	testfactory.Tenant(t, site.pool, &testfactory.TenantOpts{Slug: "globex", Name: "Globex"})
	path := fmt.Sprintf("/admin/blocked/%d", site.copyID)

	c := site.client(t)
	c.login(site.user(t, "viewer@acme.example", auth.RoleViewer, "acme"))
	require.Contains(t, string(c.get("/admin/review").body), fmt.Sprintf(`data-id="%d"`, site.copyID))
	page := c.get(path)
	require.Equal(t, http.StatusOK, page.status)
	require.NotContains(t, string(page.body), `id="dismiss-submit"`)
	require.Equal(t, http.StatusForbidden, c.submit(path+"/dismiss", url.Values{"reason": {"forged"}}).status)

	c = site.client(t)
	c.login(site.user(t, "admin@globex.example", auth.RoleAdmin, "globex"))
	queue := c.get("/admin/review")
	require.Contains(t, string(queue.body), `No changed copy awaits a decision.`)
	require.NotContains(t, string(queue.body), `id="open-reviews"`, "another tenant's copies are not counted")
	require.Contains(t, string(c.get("/admin/review?tenant=acme").body), `there is no tenant &#34;acme&#34;`, "nor can they be named")
	require.Equal(t, http.StatusNotFound, c.get(path).status)
	require.Equal(t, http.StatusNotFound, c.submit(path+"/dismiss", url.Values{"reason": {"not mine"}}).status)

	c = site.client(t)
	c.login(site.user(t, "admin@acme.example", auth.RoleAdmin, "acme"))
	require.Equal(t, http.StatusForbidden, c.post(path+"/dismiss", url.Values{"reason": {"no token"}}).status)

	require.Zero(t, site.count(t, `SELECT count(*) FROM blocked_copies WHERE review_state <> 'open'`))
	require.Zero(t, site.count(t, `SELECT count(*) FROM audit_events WHERE action = 'message.duplicate_dismissed'`))
}

// The audit log's "content changed only" filter lists the blocked
// duplicates whose content changed, and no other event.
func TestAuditContentChangedOnly(t *testing.T) {
	t.Parallel()
	site := newChangedCopySite(t)
	require.Equal(t, http.StatusOK, site.post(t, rawEnvelope(t, "ORDERS05", "orders05_resent_same_docnum.json")).status)
	c := site.client(t)
	c.login(site.user(t, "admin@acme.example", auth.RoleAdmin, ""))
	all := c.get("/admin/audit?action=message.duplicate_blocked")
	require.Equal(t, 2, strings.Count(string(all.body), `<tr class="event"`))
	changed := c.get("/admin/audit?content=changed")
	require.Equal(t, 1, strings.Count(string(changed.body), `<tr class="event"`))
	require.Contains(t, string(changed.body), fmt.Sprintf(`href="/admin/blocked/%d"`, site.copyID))
	require.Contains(t, string(changed.body), `id="filter-changed" value="changed" checked`)
	require.Contains(t, string(c.get("/admin/audit?content=weird").body), `&#34;weird&#34; is not a content comparison`)
}

// The navigation's count stops at 99+.
func TestOpenCountText(t *testing.T) {
	t.Parallel()
	for n, want := range map[int64]string{0: "", 1: "1", 99: "99", 100: "99+", 5000: "99+"} {
		require.Equal(t, want, blocked.OpenCountText(n), "%d", n)
	}
}

// A sender resending the same changed copy, many times at once, leaves one
// open item to review that counts every arrival, while each arrival is
// still an audit event; the queue and the copy's page say how many came.
func TestResentChangedCopiesAreOneItem(t *testing.T) {
	t.Parallel()
	site := newChangedCopySite(t)
	const resends = 16
	body := rawEnvelope(t, "ORDERS05", "orders05_changed_content_same_belnr.json")
	statuses := make([]int, resends)
	var wg sync.WaitGroup
	for i := range resends {
		wg.Add(1)
		go func() {
			defer wg.Done()
			statuses[i] = site.post(t, body).status
		}()
	}
	wg.Wait()
	for _, status := range statuses {
		require.Equal(t, http.StatusOK, status)
	}
	require.Equal(t, 1, site.count(t, `SELECT count(*) FROM blocked_copies`))
	require.Equal(t, 1, site.count(t, `SELECT count(*) FROM blocked_copies
		WHERE id = $1 AND copies = $2 AND last_seen_at > received_at`, site.copyID, resends+1))
	require.Equal(t, resends+1, site.count(t, `SELECT count(*) FROM audit_events
		WHERE action = 'message.duplicate_blocked' AND details->>'content' = 'changed'`))

	c := site.client(t)
	c.login(site.user(t, "admin@acme.example", auth.RoleAdmin, "acme"))
	queue := string(c.get("/admin/review").body)
	require.Equal(t, 1, strings.Count(queue, `<tr class="copy"`))
	require.Contains(t, queue, fmt.Sprintf(`<small class="arrivals">%d arrivals, last <time`, resends+1))
	require.Contains(t, string(c.get(fmt.Sprintf("/admin/blocked/%d", site.copyID)).body),
		fmt.Sprintf(`<span id="copy-arrivals">; arrived %d times, the last <time`, resends+1))

	// Once dismissed, the same copy arriving again is one new open item.
	require.Equal(t, http.StatusSeeOther, c.submit(fmt.Sprintf("/admin/blocked/%d/dismiss", site.copyID),
		url.Values{"reason": {"repeat output"}}).status)
	for range 2 {
		require.Equal(t, http.StatusOK, site.post(t, body).status)
	}
	require.Equal(t, 1, site.count(t, `SELECT count(*) FROM blocked_copies WHERE review_state = 'open' AND copies = 2 AND id <> $1`, site.copyID))
}
