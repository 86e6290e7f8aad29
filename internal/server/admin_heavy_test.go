package server_test

import (
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/lefia/edihub/internal/auth"
	"github.com/lefia/edihub/internal/config"
	"github.com/lefia/edihub/internal/pgtest"
)

// fetch sends a request of c's session in the background (without the
// test helpers, which must not fail a test from another goroutine) and
// delivers its answer; a failed request is a status of 0.
func fetch(c *adminClient, method, path string, form url.Values) <-chan response {
	answer := make(chan response, 1)
	go func() {
		req, err := http.NewRequest(method, c.base+path, strings.NewReader(form.Encode()))
		if err != nil {
			answer <- response{}
			return
		}
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		resp, err := c.http.Do(req)
		if err != nil {
			answer <- response{}
			return
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		answer <- response{status: resp.StatusCode, header: resp.Header, body: body}
	}()
	return answer
}

// One user's pages that work on whole payloads (a message, a blocked copy,
// the message-type editor's impact and preview) are prepared at most two at
// a time: with two of them waiting on the database, any further one of the
// same user is refused after a short wait with 429 and Retry-After, while
// another user's page and the user's light pages go on.
func TestHeavyAdminPagesAreLimitedPerUser(t *testing.T) {
	t.Parallel()
	// The pages waiting for the table hold connections; the others need
	// some too.
	cfg, err := config.Load(func(string) string { return "" })
	require.NoError(t, err)
	site := adminSiteOn(t, setupWith(t, pgtest.PoolFor(t, pgtest.URL(t)+"&pool_max_conns=16"), cfg))
	changed := site.post(t, rawEnvelope(t, "ORDERS05", "orders05_changed_content_same_belnr.json"))
	require.Equal(t, http.StatusOK, changed.status, "%s", changed.body)
	var copyID, typeID int64
	require.NoError(t, site.pool.QueryRow(t.Context(), `SELECT c.id, c.message_type_id FROM blocked_copies c
		JOIN tenants t ON t.id = c.tenant_id WHERE t.slug = 'acme'`).Scan(&copyID, &typeID))
	admin := site.client(t)
	admin.login(site.user(t, "admin@acme.example", auth.RoleAdmin, "acme"))
	other := site.client(t)
	other.login(site.user(t, "other@acme.example", auth.RoleAdmin, "acme"))
	messagePage := fmt.Sprintf("/admin/messages/%d", site.original)

	release := lockTable(t, site.testBundle, "messages")
	pending := []<-chan response{
		fetch(admin, http.MethodGet, messagePage, nil),
		fetch(admin, http.MethodGet, messagePage, nil),
		fetch(other, http.MethodGet, messagePage, nil),
	}
	require.Eventually(t, func() bool {
		return site.count(t, `SELECT count(*) FROM pg_locks l JOIN pg_class r ON r.oid = l.relation
			WHERE r.relname = 'messages' AND NOT l.granted`) == len(pending)
	}, 10*time.Second, 20*time.Millisecond, "the three pages wait for the table, holding their places")

	start := time.Now()
	var refused []<-chan response
	for _, path := range []string{messagePage, fmt.Sprintf("/admin/blocked/%d", copyID), fmt.Sprintf("/admin/message-types/%d", typeID)} {
		refused = append(refused, fetch(admin, http.MethodGet, path, nil))
	}
	refused = append(refused, fetch(admin, http.MethodPost, fmt.Sprintf("/admin/message-types/%d/preview", typeID),
		url.Values{"_csrf": {admin.csrf}, "fields": {"*.IDOC.E1EDK01.BELNR"}}))
	for _, answer := range refused {
		resp := <-answer
		require.Equal(t, http.StatusTooManyRequests, resp.status, "%s", resp.body)
		require.Equal(t, "5", resp.header.Get("Retry-After"))
		require.Contains(t, string(resp.body), "your other requests are preparing as many pages with whole payloads")
	}
	require.Less(t, time.Since(start), 10*time.Second, "refused after a short wait, not at the time limit")
	require.Equal(t, http.StatusOK, admin.get("/admin/users").status, "a light page is not limited")

	release()
	for _, answer := range pending {
		require.Equal(t, http.StatusOK, (<-answer).status)
	}
	require.Equal(t, http.StatusOK, admin.get(messagePage).status, "the places were given back")
}
