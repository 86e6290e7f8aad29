package server_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/require"

	"github.com/lefia/edihub/internal/auth"
	"github.com/lefia/edihub/internal/config"
	"github.com/lefia/edihub/internal/retention"
)

// Admins read on the retention page how long each kind of data is kept, how
// long each tenant's messages are kept and why, and what the last sweep
// removed; a tenant's admin sees only their tenant and no counts across
// tenants. A swept message's page says it may have expired, and after how
// long.
func TestBrowserRetention(t *testing.T) {
	t.Parallel()
	site := newAdminSite(t)
	long := 2400 // 100 days, longer than RETENTION_MESSAGES' 90
	site.messageType(t, "INVOIC02", nil, &long)
	cfg, err := config.Load(func(string) string { return "" })
	require.NoError(t, err)

	// Three of acme's messages are 200 days old: past its 100 days.
	var expired []int64
	for i := range 3 {
		var id int64
		require.NoError(t, site.pool.QueryRow(context.Background(), `
			INSERT INTO messages (tenant_id, environment_id, message_type_id, payload, content_hash, source_endpoint, received_at)
			SELECT mt.tenant_id, e.id, mt.id, '{}', sha256($1::text::bytea), 'receive-message', now() - interval '200 days'
			FROM message_types mt JOIN environments e ON e.tenant_id = mt.tenant_id
			WHERE mt.code = 'INVOIC02' RETURNING id`, fmt.Sprint(i)).Scan(&id))
		expired = append(expired, id)
	}
	removed, err := retention.NewSweeper(site.pool, slog.New(slog.NewTextHandler(io.Discard, nil)), 2, time.Minute,
		retention.Policy{Periods: cfg.Retention, KeyTTL: cfg.IdempotencyKeyTTL}).Sweep(context.Background())
	require.NoError(t, err)
	require.Equal(t, int64(3), removed[retention.Messages])
	// The audit trail's maintenance records the months it dropped beside them.
	_, err = site.pool.Exec(context.Background(), `INSERT INTO retention_sweeps (kind, finished_at, removed) VALUES ('audit_events', now(), 1)`)
	require.NoError(t, err)

	b := newBrowser(t)
	b.signIn(t, site.url, "/admin", site.user(t, "root@example.com", auth.RoleViewer, ""))
	b.do(t,
		chromedp.Click(chromedp.CSS(`#retention-link a`)),
		chromedp.WaitVisible(chromedp.CSS(`#sweeps`)),
	)
	require.Equal(t, site.url+"/admin/retention", b.location(t))
	require.Equal(t, "Retention", eval[string](t, b, `document.querySelector('nav [aria-current=page]').textContent`))
	periods := func() map[string]string {
		return eval[map[string]string](t, b, `Object.fromEntries([...document.querySelectorAll('#periods tr[data-kind]')].map(r => [r.dataset.kind, r.querySelector('.period').textContent]))`)
	}
	require.Equal(t, map[string]string{"messages": "90d", "audit_events": "365d", "blocked_copies": "90d",
		"delivery_attempts": "30d", "idempotency_keys": "7d", "interchanges": "30d"}, periods())
	tenants := func() map[string]string {
		return eval[map[string]string](t, b, `Object.fromEntries([...document.querySelectorAll('#tenant-retention tr[data-tenant]')].map(r => [r.dataset.tenant, r.querySelector('td').textContent]))`)
	}
	require.Equal(t, map[string]string{
		"acme":   "100d: the duplicate window of INVOIC02 (2400 h), longer than RETENTION_MESSAGES",
		"globex": "90d: RETENTION_MESSAGES",
	}, tenants())
	require.Equal(t, "3", eval[string](t, b, `document.querySelector('#sweeps tr[data-kind=messages] .removed').textContent`))
	require.Equal(t, "1", eval[string](t, b, `document.querySelector('#sweeps tr[data-kind=audit_events] .removed').textContent`))
	require.Equal(t, []string{"Idempotency keys", "Messages", "Blocked copies", "Delivery attempts", "Audit events (months dropped)"},
		eval[[]string](t, b, `[...document.querySelectorAll('#sweeps tbody th')].map(th => th.textContent)`))
	b.snapshot(t, "retention-global")

	// acme's admin sees acme alone, and the sweep's time without counts.
	b = newBrowser(t)
	b.signIn(t, site.url, "/admin/retention", site.user(t, "admin@acme.example", auth.RoleAdmin, "acme"))
	require.Equal(t, []string{"acme"}, eval[[]string](t, b, `[...document.querySelectorAll('#tenant-retention tr[data-tenant]')].map(r => r.dataset.tenant)`))
	require.Zero(t, eval[int](t, b, `document.querySelectorAll('#sweeps .removed').length`))
	require.Equal(t, 5, eval[int](t, b, `document.querySelectorAll('#sweeps tbody tr').length`))
	b.snapshot(t, "retention-tenant")

	// A swept message's page tells why it may be gone.
	b.do(t, chromedp.Navigate(fmt.Sprintf("%s/admin/messages/%d", site.url, expired[0])))
	require.Equal(t, fmt.Sprintf("there is no message %d", expired[0]), eval[string](t, b, `document.querySelector('#error-detail').textContent`))
	require.Equal(t, "It may have expired after its retention: messages of acme are kept 100d: the duplicate window of INVOIC02 (2400 h), longer than RETENTION_MESSAGES.",
		eval[string](t, b, `document.querySelector('#error-hint').textContent`))
	client := site.client(t)
	client.login("admin@acme.example")
	require.Equal(t, http.StatusNotFound, client.get(fmt.Sprintf("/admin/messages/%d", expired[0])).status)
	b.screenshot(t, "retention-expired-message")
}
