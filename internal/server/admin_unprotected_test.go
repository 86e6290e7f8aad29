package server_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/lefia/edihub/internal/alert"
	"github.com/lefia/edihub/internal/auth"
	"github.com/lefia/edihub/internal/config"
	"github.com/lefia/edihub/internal/delivery"
	"github.com/lefia/edihub/internal/pgtest"
)

// A primary that lost its standby (its replication slot kept, no standby
// streaming) says so on /readyz and, after a minute, in the global alert
// database.unprotected, which global users see on /admin/alerts and a
// tenant's users do not.
func TestDatabaseUnprotectedOnAlertsPage(t *testing.T) {
	t.Parallel()
	cluster := pgtest.NewCluster(t)
	cluster.Exec(`SELECT pg_create_physical_replication_slot('lost_standby')`)
	pool := pgtest.PoolFor(t, cluster.MigratedURL())
	cfg, err := config.Load(func(string) string { return "" })
	require.NoError(t, err)
	b := setupWith(t, pool, cfg)
	ready := do(t, http.MethodGet, b.url+"/readyz", nil, nil)
	require.Equal(t, http.StatusServiceUnavailable, ready.status, "intake refuses what would be on one machine")
	require.Equal(t, "no synchronous standby: acknowledged messages are on one machine", ready.json(t)["replication"])

	at := time.Now()
	eval := alert.New(pool, slog.New(slog.NewTextHandler(io.Discard, nil)), cfg.Alerts, delivery.NewService(pool, 3),
		alert.WithClock(func() time.Time { return at }))
	for range 2 {
		_, err := eval.Evaluate(context.Background())
		require.NoError(t, err)
		at = at.Add(61 * time.Second)
	}
	var id int64
	require.NoError(t, pool.QueryRow(context.Background(), `SELECT id FROM alerts WHERE rule = $1 AND state = 'open'`,
		alert.DatabaseUnprotected).Scan(&id))

	global := b.client(t)
	global.login(b.user(t, "dba@example.com", auth.RoleAdmin, ""))
	list := global.get("/admin/alerts?rule=database.unprotected")
	require.Equal(t, http.StatusOK, list.status)
	require.Equal(t, []string{fmt.Sprint(id)}, alertIDs(list.body))
	require.Contains(t, string(list.body), "The database has no synchronous standby: acknowledged messages are on one machine")
	require.Contains(t, string(global.get("/admin/alerts").body), `<option value="database.unprotected"`, "the filter offers the rule")
	one := string(global.get(fmt.Sprintf("/admin/alerts/%d", id)).body)
	require.Contains(t, one, "intake answers 503 meanwhile (REQUIRE_SYNCHRONOUS_STANDBY, the default)")

	acme := b.client(t)
	acme.login(b.user(t, "admin@acme.example", auth.RoleAdmin, "acme"))
	require.Empty(t, alertIDs(acme.get("/admin/alerts").body), "a global alert")
	require.Equal(t, http.StatusNotFound, acme.get(fmt.Sprintf("/admin/alerts/%d", id)).status)
}
