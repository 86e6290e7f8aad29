package server_test

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/lefia/edihub/internal/auth"
	"github.com/lefia/edihub/internal/config"
	"github.com/lefia/edihub/internal/egress"
	"github.com/lefia/edihub/internal/notify"
	"github.com/lefia/edihub/internal/pgtest"
	"github.com/lefia/edihub/internal/provision"
	"github.com/lefia/edihub/internal/testfactory"
)

// channelSite is a running server whose egress policy opens loopback, with
// tenants acme and globex.
type channelSite struct {
	*testBundle
}

func newChannelSite(t *testing.T) *channelSite {
	t.Helper()
	cfg, err := config.Load(func(string) string { return "" })
	require.NoError(t, err)
	cfg.Delivery.Egress, err = egress.ParsePolicy("127.0.0.0/8")
	require.NoError(t, err)
	site := &channelSite{testBundle: setupWith(t, pgtest.Pool(t), cfg)}
	testfactory.TenantWithEnvironment(t, site.pool, "globex")
	return site
}

// channel creates a channel of tenant ("": global) and returns its id.
func (site *channelSite) channel(t *testing.T, tenant, kind, target string) int64 {
	t.Helper()
	policy, err := egress.ParsePolicy("127.0.0.0/8")
	require.NoError(t, err)
	id, _, err := provision.New(site.pool).CreateChannel(context.Background(), provision.ChannelSpec{
		TenantSlug: tenant, Kind: kind, Target: target,
	}, policy)
	require.NoError(t, err)
	return id
}

func channelPath(id int64, action string) string {
	return "/admin/channels/" + strconv.FormatInt(id, 10) + action
}

func TestAdminChannelsKeepToTheTenantAndTheRole(t *testing.T) {
	t.Parallel()
	site := newChannelSite(t)
	global := site.channel(t, "", notify.KindEmail, "noc@example.com")
	acme := site.channel(t, "acme", notify.KindEmail, "ops@acme.example")
	globex := site.channel(t, "globex", notify.KindEmail, "ops@globex.example")
	channels := func() int { return site.count(t, `SELECT count(*) FROM notification_channels`) }

	admin := site.client(t)
	admin.login(site.user(t, "admin@acme.example", auth.RoleAdmin, "acme"))
	list := admin.get("/admin/channels")
	require.Equal(t, http.StatusOK, list.status)
	require.Contains(t, string(list.body), "ops@acme.example")
	require.NotContains(t, string(list.body), "ops@globex.example", "another tenant's channels are not listed")
	require.NotContains(t, string(list.body), "noc@example.com", "nor the global ones")
	for _, id := range []int64{global, globex} {
		require.Equal(t, http.StatusNotFound, admin.get(channelPath(id, "")).status)
		admin.get(channelPath(acme, ""))
		require.Equal(t, http.StatusNotFound, admin.submit(channelPath(id, ""), url.Values{"target": {"x@acme.example"}}).status)
		require.Equal(t, http.StatusNotFound, admin.submit(channelPath(id, "/test"), url.Values{}).status)
		require.Equal(t, http.StatusNotFound, admin.submit(channelPath(id, "/delete"), url.Values{}).status)
	}
	admin.get("/admin/channels/new")
	for _, tenant := range []string{"globex", ""} {
		r := admin.submit("/admin/channels", url.Values{"tenant": {tenant}, "kind": {"email"}, "target": {"x@acme.example"}})
		require.Equal(t, http.StatusBadRequest, r.status, "a tenant's admin creates channels of its tenant only")
		require.Contains(t, string(r.body), "choose one of the tenants listed")
	}
	require.Equal(t, 3, channels())

	r := admin.submit("/admin/channels", url.Values{"tenant": {"acme"}, "kind": {"email"}, "target": {"Ops <x@acme.example>"}})
	require.Equal(t, http.StatusBadRequest, r.status)
	require.Contains(t, string(r.body), "not a bare email address")
	r = admin.submit("/admin/channels", url.Values{"tenant": {"acme"}, "kind": {"webhook"}, "target": {"http://10.1.2.3/hook"}})
	require.Equal(t, http.StatusBadRequest, r.status)
	require.Contains(t, string(r.body), "10.1.2.3 is a private address")
	require.Equal(t, 3, channels(), "nothing stored")
	r = admin.submit("/admin/channels", url.Values{"tenant": {"acme"}, "kind": {"email"}, "target": {"oncall@acme.example"}, "name": {"On call"}})
	require.Equal(t, http.StatusCreated, r.status, "%s", r.body)
	require.Equal(t, 4, channels())

	r = admin.submit(channelPath(acme, ""), url.Values{"target": {"ops2@acme.example"}, "name": {"Operations"}})
	require.Equal(t, http.StatusSeeOther, r.status, "%s", r.body)
	require.Contains(t, string(admin.get(channelPath(acme, "?saved=1")).body), "ops2@acme.example")
	r = admin.submit(channelPath(acme, "/delete"), url.Values{})
	require.Equal(t, http.StatusSeeOther, r.status)
	require.Equal(t, fmt.Sprintf("/admin/channels?deleted=%d", acme), r.header.Get("Location"))
	require.Equal(t, 3, channels())
	require.Equal(t, 3, site.count(t, `SELECT count(*) FROM audit_events
		WHERE action IN ('channel.created', 'channel.updated', 'channel.deleted') AND actor LIKE 'user:%'
		AND tenant_id = (SELECT id FROM tenants WHERE slug = 'acme')`))

	viewer := site.client(t)
	viewer.login(site.user(t, "viewer@globex.example", auth.RoleViewer, "globex"))
	list = viewer.get("/admin/channels")
	require.Contains(t, string(list.body), "ops@globex.example")
	require.NotContains(t, string(list.body), `id="new-channel"`)
	page := viewer.get(channelPath(globex, ""))
	require.Equal(t, http.StatusOK, page.status, "a viewer reads a channel and what it was sent")
	require.NotContains(t, string(page.body), `id="channel-form"`)
	require.NotContains(t, string(page.body), `id="channel-test"`)
	require.Equal(t, http.StatusForbidden, viewer.get("/admin/channels/new").status)
	for _, action := range []string{"", "/test", "/delete"} {
		require.Equal(t, http.StatusForbidden, viewer.submit(channelPath(globex, action), url.Values{"target": {"x@globex.example"}}).status)
	}
	require.Equal(t, http.StatusForbidden, viewer.submit("/admin/channels", url.Values{"tenant": {"globex"}, "kind": {"email"}, "target": {"x@globex.example"}}).status)
	require.Equal(t, 3, channels())
	require.Zero(t, site.count(t, `SELECT count(*) FROM notifications`), "no test was sent")

	root := site.client(t)
	root.login(site.user(t, "root@example.com", auth.RoleAdmin, ""))
	list = root.get("/admin/channels")
	for _, target := range []string{"noc@example.com", "ops@globex.example", "oncall@acme.example"} {
		require.Contains(t, string(list.body), target, "a global admin sees every channel")
	}
	root.get("/admin/channels/new")
	r = root.submit("/admin/channels", url.Values{"tenant": {""}, "kind": {"email"}, "target": {"noc2@example.com"}})
	require.Equal(t, http.StatusCreated, r.status, "%s", r.body)
	require.Equal(t, 2, site.count(t, `SELECT count(*) FROM notification_channels WHERE tenant_id IS NULL`), "a global admin's channel is global")
}
