package alert_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/lefia/edihub/internal/alert"
	"github.com/lefia/edihub/internal/db"
	"github.com/lefia/edihub/internal/pgtest"
	"github.com/lefia/edihub/internal/replication"
)

// database.unprotected follows a real primary and standby as
// pg_auto_failover drives them: nothing while the standby confirms every
// commit; when the standby is lost and the primary goes on alone
// (synchronous_standby_names cleared, the standby's slot kept), an alert
// to the global channels after a minute, not for the seconds of a
// switchover; resolved once the standby is back and synchronous.
func TestDatabaseUnprotectedFollowsTheStandby(t *testing.T) {
	t.Parallel()
	primary := pgtest.NewCluster(t)
	standby := primary.NewStandby()
	primary.Synchronous(pgtest.StandbySlot)
	b := setupOn(t, pgtest.PoolFor(t, primary.MigratedURL()))
	b.channel(t, "", "dba@example.com")
	state := func() replication.State {
		s, err := replication.Read(context.Background(), db.On(b.pool))
		require.NoError(t, err)
		return s
	}
	require.Eventually(t, func() bool { return state().Protected() }, 30*time.Second, 50*time.Millisecond)
	require.Zero(t, b.evaluate(t).Opened, "protected")

	standby.Stop()
	primary.Synchronous("")
	require.Equal(t, replication.State{Configured: true}, state(), "the slot tells a lost standby from a single server")
	require.Zero(t, b.evaluate(t).Opened, "alone for less than a minute: a switchover's seconds")
	b.clock.advance(30 * time.Second)
	require.Zero(t, b.evaluate(t).Opened)
	b.clock.advance(31 * time.Second)
	require.Equal(t, 1, b.evaluate(t).Opened)
	a := b.requireOneAlert(t, alert.DatabaseUnprotected, "database:primary", alert.Open)
	require.Nil(t, a.TenantID, "a global alert")
	require.Equal(t, "The database has no synchronous standby: acknowledged messages are on one machine", a.Title)
	require.Contains(t, a.Lines[0], "since "+b.clock.now().Add(-61*time.Second).UTC().Format("2006-01-02 15:04 UTC"))
	b.clock.advance(time.Minute)
	require.Zero(t, b.evaluate(t).Opened, "once per incident")
	require.Equal(t, []string{"database.unprotected opened"}, b.notified(t))
	require.Equal(t, []string{"dba@example.com"}, pgtest.Column[string](t, b.pool,
		`SELECT c.target FROM notifications n JOIN notification_channels c ON c.id = n.channel_id WHERE n.rule = 'database.unprotected'`),
		"the global channel, not a tenant's")

	// Another evaluator, as after a restart, keeps the alert open rather
	// than wait a minute again.
	b.eval = b.evaluator(t)
	round := b.evaluate(t)
	require.Zero(t, round.Resolved)

	standby.Start()
	primary.Synchronous(pgtest.StandbySlot)
	require.Eventually(t, func() bool { return state().Protected() }, 30*time.Second, 50*time.Millisecond)
	require.Equal(t, 1, b.evaluate(t).Resolved)
	b.requireOneAlert(t, alert.DatabaseUnprotected, "database:primary", alert.Resolved)
	require.Equal(t, []string{"database.unprotected opened", "database.unprotected resolved"}, b.notified(t))
}
