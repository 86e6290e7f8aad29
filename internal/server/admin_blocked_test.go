package server_test

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/lefia/edihub/internal/auth"
	"github.com/lefia/edihub/internal/testfactory"
)

// changedPaths are the paths in which the sample repeat output with changed
// content differs from the sample order, read off the two files (see also
// internal/payloaddiff).
var changedPaths = []string{
	"/ORDERS05/IDOC/E1EDK03/1/DATUM",
	"/ORDERS05/IDOC/E1EDP01/3",
	"/ORDERS05/IDOC/E1EDS01/SUMME",
	"/ORDERS05/IDOC/EDI_DC40/CREDAT",
	"/ORDERS05/IDOC/EDI_DC40/CRETIM",
	"/ORDERS05/IDOC/EDI_DC40/DOCNUM",
	"/ORDERS05/IDOC/EDI_DC40/SERIAL",
}

// rawEnvelope wraps a sample payload in a receive-message body by hand, so
// that the payload keeps its bytes (json.Marshal would compact it).
func rawEnvelope(t *testing.T, messageType, sample string) []byte {
	t.Helper()
	return []byte(`{"message_type": "` + messageType + `", "payload": ` + string(readFile(t, sample)) + `}`)
}

// changedCopySite is a running server whose tenant acme holds the sample
// order, with the sample's changed repeat output blocked against it.
type changedCopySite struct {
	*testBundle
	original int64
	copyID   int64
}

func newChangedCopySite(t *testing.T) *changedCopySite {
	t.Helper()
	b := setup(t)
	b.messageType(t, "ORDERS05", []string{"*.IDOC.E1EDK01.BELNR"}, nil)
	first := b.post(t, rawEnvelope(t, "ORDERS05", "orders05.json"))
	require.Equal(t, http.StatusCreated, first.status, "%s", first.body)
	again := b.post(t, rawEnvelope(t, "ORDERS05", "orders05_changed_content_same_belnr.json"), "User-Agent", "SAP NetWeaver/7.5")
	require.Equal(t, http.StatusOK, again.status, "%s", again.body)
	site := &changedCopySite{testBundle: b, original: int64(first.json(t)["id"].(float64))}
	require.NoError(t, b.pool.QueryRow(context.Background(), `SELECT id FROM blocked_copies`).Scan(&site.copyID))
	return site
}

// A copy blocked by its fingerprint is kept only when its content differs
// from the original's: with its exact bytes, beside its audit event, with
// the headers that name its sender and none that prove anything.
func TestOnlyChangedCopiesAreKept(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.messageType(t, "ORDERS05", []string{"*.IDOC.E1EDK01.BELNR"}, nil)
	first := b.post(t, rawEnvelope(t, "ORDERS05", "orders05.json"))
	require.Equal(t, http.StatusCreated, first.status, "%s", first.body)
	original := int64(first.json(t)["id"].(float64))

	// Retransmissions with the same content are blocked and keep nothing.
	for _, sample := range []string{"orders05_resent_same_docnum.json", "orders05.json"} {
		resp := b.post(t, rawEnvelope(t, "ORDERS05", sample))
		require.Equal(t, http.StatusOK, resp.status, "%s", resp.body)
	}
	require.Equal(t, 2, b.blockedEvents(t))
	require.Zero(t, b.count(t, `SELECT count(*) FROM blocked_copies`))

	// The changed repeat output is blocked too, and kept.
	// The payload value's bytes: the file's final newline follows the value,
	// so it is the envelope's whitespace, not the payload's.
	changed := bytes.TrimSuffix(readFile(t, "orders05_changed_content_same_belnr.json"), []byte("\n"))
	resp := b.post(t, rawEnvelope(t, "ORDERS05", "orders05_changed_content_same_belnr.json"),
		"User-Agent", "SAP NetWeaver/7.5", "X-GitHub-Delivery", "d-1", "Cookie", "session=secret",
		"X-Hub-Signature-256", "sha256=00", "X-Unlisted", "x")
	require.Equal(t, http.StatusOK, resp.status, "%s", resp.body)
	require.Equal(t, 1, b.messages(t))
	require.Equal(t, 1, b.count(t, `SELECT count(*) FROM blocked_copies`))

	var (
		payload, sender string
		event, of       int64
		content         string
	)
	require.NoError(t, b.pool.QueryRow(context.Background(), `
		SELECT c.payload::text, c.sender::text, c.audit_event_id, c.original_message_id, e.details->>'content'
		FROM blocked_copies c JOIN audit_events e ON e.id = c.audit_event_id`).
		Scan(&payload, &sender, &event, &of, &content))
	require.True(t, string(changed) == payload, "the exact bytes received, not %q", payload)
	require.Equal(t, original, of)
	require.Equal(t, "changed", content)
	require.Equal(t, 1, b.count(t, `SELECT count(*) FROM audit_events WHERE id = $1 AND message_id = $2`, event, original))
	require.JSONEq(t, `{"endpoint": "receive-message", "integration_id": null, "remote_addr": "127.0.0.1",
		"request_id": "`+resp.header.Get("X-Request-Id")+`",
		"headers": {"User-Agent": "SAP NetWeaver/7.5", "X-GitHub-Delivery": "d-1"}}`, sender,
		"no Authorization, cookie, signature or unlisted header")
}

// A bearer webhook delivered without an Idempotency-Key is deduplicated by
// fingerprint; its changed copy keeps the integration and the sender's shop
// domain, not the API key.
func TestWebhookChangedCopyKeepsItsSender(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.messageType(t, "SHOP_ORDER", []string{"id"}, nil)
	id := b.integration(t, "SHOP_ORDER", "bearer", "")
	body := []byte(`{"id":"4500012345","total_price":"199.00"}`)
	changed := []byte(`{"id":"4500012345","total_price":"249.00"}`)
	auth := []string{"Authorization", "Bearer " + b.apiKey}
	require.Equal(t, http.StatusCreated, b.webhook(t, id, body, auth...).status)
	resp := b.webhook(t, id, changed, append(auth,
		"X-Shopify-Shop-Domain", "acme.myshopify.com", "User-Agent", "Shopify-Captain-Hook")...)
	require.Equal(t, http.StatusOK, resp.status, "%s", resp.body)

	var sender string
	require.NoError(t, b.pool.QueryRow(context.Background(), `SELECT sender::text FROM blocked_copies`).Scan(&sender))
	require.JSONEq(t, fmt.Sprintf(`{"endpoint": "webhook", "integration_id": %q, "remote_addr": "127.0.0.1", "request_id": %q,
		"headers": {"X-Shopify-Shop-Domain": "acme.myshopify.com", "User-Agent": "Shopify-Captain-Hook"}}`,
		id, resp.header.Get("X-Request-Id")), sender)
}

var diffPath = regexp.MustCompile(`<td class="path"><code>([^<]*)</code></td>`)

// An admin reads the diff of a changed copy, accepts it as a new message
// with a reason, and finds the new message and the release event; the
// original stays the message retransmissions match, and a second release
// is refused.
func TestReleaseAcceptsAChangedCopyOnce(t *testing.T) {
	t.Parallel()
	site := newChangedCopySite(t)
	admin := site.user(t, "admin@acme.example", auth.RoleAdmin, "acme")
	c := site.client(t)
	c.login(admin)

	// The audit row says "changed" and links to the diff.
	audit := c.get("/admin/audit?action=message.duplicate_blocked")
	require.Equal(t, http.StatusOK, audit.status)
	require.Contains(t, string(audit.body), fmt.Sprintf(`<a class="diff" href="/admin/blocked/%d">diff</a>`, site.copyID))

	page := c.get(fmt.Sprintf("/admin/blocked/%d", site.copyID))
	require.Equal(t, http.StatusOK, page.status, "%s", page.body)
	var paths []string
	for _, m := range diffPath.FindAllSubmatch(page.body, -1) {
		paths = append(paths, string(m[1]))
	}
	require.Equal(t, changedPaths, paths)
	require.Contains(t, string(page.body), `id="release-submit"`)
	require.Contains(t, string(page.body), "SAP NetWeaver/7.5", "the sender's User-Agent")

	// A reason is required; nothing is stored without one.
	path := fmt.Sprintf("/admin/blocked/%d/release", site.copyID)
	resp := c.submit(path, url.Values{"reason": {"   "}})
	require.Equal(t, http.StatusBadRequest, resp.status)
	require.Contains(t, string(resp.body), `id="release-problem"`)
	require.Equal(t, 1, site.messages(t))

	resp = c.submit(path, url.Values{"reason": {"corrected order: item 00040 added"}})
	require.Equal(t, http.StatusSeeOther, resp.status, "%s", resp.body)
	var released int64
	require.NoError(t, site.pool.QueryRow(context.Background(),
		`SELECT released_message_id FROM blocked_copies WHERE id = $1`, site.copyID).Scan(&released))
	require.Equal(t, fmt.Sprintf("/admin/messages/%d?released=%d", released, site.copyID), resp.header.Get("Location"))

	// The new message holds the copy's bytes and computes the original's
	// fingerprint without taking it over.
	require.Equal(t, 1, site.count(t, `
		SELECT count(*) FROM messages n, messages o, blocked_copies c
		WHERE n.id = $1 AND o.id = $2 AND c.id = $3
		  AND n.payload::text = c.payload::text AND n.docnum = '0000000000900178'
		  AND n.computed_fingerprint = o.fingerprint AND n.fingerprint IS NULL
		  AND n.received_at = c.received_at AND n.source_endpoint = 'receive-message'`,
		released, site.original, site.copyID))
	var actor, details string
	require.NoError(t, site.pool.QueryRow(context.Background(), `
		SELECT actor, details::text FROM audit_events WHERE action = 'message.duplicate_released' AND message_id = $1`,
		released).Scan(&actor, &details))
	var adminID int64
	require.NoError(t, site.pool.QueryRow(context.Background(), `SELECT id FROM users WHERE email = $1`, admin).Scan(&adminID))
	require.Equal(t, "user:"+strconv.FormatInt(adminID, 10), actor)
	require.JSONEq(t, fmt.Sprintf(`{"copy_id": %d, "original_message_id": %d, "new_message_id": %d,
		"reason": "corrected order: item 00040 added", "admin_email": %q}`, site.copyID, site.original, released, admin), details)

	// The new message says where it came from; the original's duplicates
	// say the copy was released.
	msg := c.get(resp.header.Get("Location"))
	require.Equal(t, http.StatusOK, msg.status)
	require.Contains(t, string(msg.body), `id="release-done"`)
	require.Contains(t, string(msg.body), `id="released-from"`)
	require.Contains(t, string(msg.body), "Not claimed: the message was accepted from a blocked copy")
	orig := c.get(fmt.Sprintf("/admin/messages/%d", site.original))
	require.Contains(t, string(orig.body), fmt.Sprintf(`<a class="released" href="/admin/messages/%d">`, released))
	require.Contains(t, string(orig.body), `id="changed-copies"`)

	// A second release is refused and names the first one's message.
	resp = c.submit(path, url.Values{"reason": {"again"}})
	require.Equal(t, http.StatusConflict, resp.status)
	require.Contains(t, string(resp.body), fmt.Sprintf("this copy was already released as message %d", released))
	require.Equal(t, 2, site.messages(t))
	require.Equal(t, 1, site.count(t, `SELECT count(*) FROM audit_events WHERE action = 'message.duplicate_released'`))

	// The original still blocks the changed content's retransmission.
	again := site.post(t, rawEnvelope(t, "ORDERS05", "orders05_changed_content_same_belnr.json"))
	require.Equal(t, http.StatusOK, again.status)
	require.Equal(t, float64(site.original), again.json(t)["duplicate_of"])
}

// A viewer sees the diff but no release form, and a forged release is
// refused; another tenant's users do not find the copy at all.
func TestReleaseNeedsAnAdminOfTheTenant(t *testing.T) {
	t.Parallel()
	site := newChangedCopySite(t)
	testfactory.Tenant(t, site.pool, &testfactory.TenantOpts{Slug: "globex", Name: "Globex"})
	viewer := site.user(t, "viewer@acme.example", auth.RoleViewer, "acme")
	stranger := site.user(t, "admin@globex.example", auth.RoleAdmin, "globex")
	path := fmt.Sprintf("/admin/blocked/%d", site.copyID)

	c := site.client(t)
	c.login(viewer)
	page := c.get(path)
	require.Equal(t, http.StatusOK, page.status)
	require.Len(t, diffPath.FindAll(page.body, -1), len(changedPaths))
	require.NotContains(t, string(page.body), `id="release-submit"`)
	resp := c.submit(path+"/release", url.Values{"reason": {"forged"}})
	require.Equal(t, http.StatusForbidden, resp.status)

	c = site.client(t)
	c.login(stranger)
	require.Equal(t, http.StatusNotFound, c.get(path).status)
	resp = c.submit(path+"/release", url.Values{"reason": {"not mine"}})
	require.Equal(t, http.StatusNotFound, resp.status)

	// Without the CSRF token even the right admin is refused.
	admin := site.user(t, "admin@acme.example", auth.RoleAdmin, "acme")
	c = site.client(t)
	c.login(admin)
	require.Equal(t, http.StatusForbidden, c.post(path+"/release", url.Values{"reason": {"no token"}}).status)

	require.Equal(t, 1, site.messages(t))
	require.Zero(t, site.count(t, `SELECT count(*) FROM blocked_copies WHERE released_message_id IS NOT NULL`))
	require.Zero(t, site.count(t, `SELECT count(*) FROM audit_events WHERE action = 'message.duplicate_released'`))
}
