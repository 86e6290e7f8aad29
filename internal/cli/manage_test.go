package cli_test

import (
	"context"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/lefia/edihub/internal/pgtest"
)

func TestAPIKeyListRevokeRotate(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	url := migrated(t)
	pool := pgtest.PoolFor(t, url)
	first := run(t, url, nil, "", "apikey", "create", "--tenant", "acme", "--env", "production", "--name", "SAP PI").lines()[0]
	second := run(t, url, nil, "", "apikey", "create", "--tenant", "acme", "--env", "production", "--name", "SAP PI").lines()[0]

	r := run(t, url, nil, "", "apikey", "list")
	require.NoError(t, r.err)
	require.Len(t, r.lines(), 2)
	byPrefix := map[string][]string{}
	for _, line := range r.lines() {
		fields := strings.Split(line, "\t")
		require.Len(t, fields, 9, line)
		byPrefix[fields[3]] = fields
		require.Equal(t, []string{"acme", "production", "active"}, []string{fields[1], fields[2], fields[4]})
		require.Equal(t, "-", fields[6])
		require.Equal(t, []string{"-", "SAP PI"}, fields[7:], "not used yet; its name")
	}
	firstID := byPrefix[first[:10]][0]
	secondID := byPrefix[second[:10]][0]
	require.NotContains(t, r.stdout, first, "the key itself is never listed")

	require.NoError(t, run(t, url, nil, "", "apikey", "revoke", firstID).err)
	rotated := run(t, url, nil, "", "apikey", "rotate", secondID, "--grace", "2h")
	require.NoError(t, rotated.err)
	successor := rotated.lines()[0]
	require.True(t, strings.HasPrefix(successor, "edh_"))

	states := map[string]string{}
	for _, line := range run(t, url, nil, "", "apikey", "list").lines() {
		fields := strings.Split(line, "\t")
		states[fields[3]] = fields[4]
	}
	require.Equal(t, map[string]string{first[:10]: "revoked", second[:10]: "expiring", successor[:10]: "active"}, states)

	var events int
	require.NoError(t, pool.QueryRow(ctx, `SELECT count(*) FROM audit_events
		WHERE actor = 'cli' AND action IN ('api_key.revoked', 'api_key.rotated')`).Scan(&events))
	require.Equal(t, 2, events)

	requireFailure(t, run(t, url, nil, "", "apikey", "rotate", firstID), "is revoked")
	requireFailure(t, run(t, url, nil, "", "apikey", "revoke", "999999"), "there is no API key 999999")
	requireFailure(t, run(t, url, nil, "", "apikey", "rotate", secondID, "--grace", "800h"), "grace period")
	requireUsageError(t, run(t, url, nil, "", "apikey", "revoke", "abc"), `"abc" is not an id`)
	requireUsageError(t, run(t, url, nil, "", "apikey", "rotate"), "want 1 argument")
	requireUsageError(t, run(t, url, nil, "", "apikey", "delete", "1"), `unknown subcommand "delete"`)
}

func TestUserListDisableEnableResetPassword(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	url := migrated(t)
	pool := pgtest.PoolFor(t, url)
	env := map[string]string{"EDIHUB_PASSWORD": "a long enough password"}
	global := run(t, url, env, "", "user", "create", "--email", "root@example.com", "--role", "admin").lines()[0]
	clerk := run(t, url, env, "", "user", "create", "--email", "clerk@acme.example", "--role", "viewer", "--tenant", "acme").lines()[0]

	states := func() map[string][]string {
		r := run(t, url, nil, "", "user", "list")
		require.NoError(t, r.err)
		byID := map[string][]string{}
		for _, line := range r.lines() {
			fields := strings.Split(line, "\t")
			require.Len(t, fields, 7, line)
			byID[fields[0]] = fields
		}
		return byID
	}
	listed := states()
	require.Equal(t, []string{global, "root@example.com", "admin", "-", "active"}, listed[global][:5])
	require.Equal(t, []string{clerk, "clerk@acme.example", "viewer", "acme", "active"}, listed[clerk][:5])
	require.Equal(t, "-", listed[clerk][6])

	require.NoError(t, run(t, url, nil, "", "user", "disable", clerk).err)
	listed = states()
	require.Equal(t, "disabled", listed[clerk][4])
	require.NotEqual(t, "-", listed[clerk][6])
	require.NoError(t, run(t, url, nil, "", "user", "enable", clerk).err)
	require.Equal(t, "active", states()[clerk][4])

	reset := run(t, url, nil, "", "user", "reset-password", clerk)
	require.NoError(t, reset.err)
	require.Len(t, reset.lines(), 1)
	require.Len(t, reset.lines()[0], 24)

	var events, epoch int
	require.NoError(t, pool.QueryRow(ctx, `SELECT count(*) FROM audit_events
		WHERE actor = 'cli' AND action IN ('user.disabled', 'user.enabled', 'user.password_reset')
		  AND details->>'user_id' = $1`, clerk).Scan(&events))
	require.Equal(t, 3, events)
	require.NoError(t, pool.QueryRow(ctx, `SELECT session_epoch FROM users WHERE id = $1`, clerk).Scan(&epoch))
	require.Equal(t, 2, epoch, "the disabling and the new password each ended the user's sessions")

	requireFailure(t, run(t, url, nil, "", "user", "disable", "999999"), "there is no user 999999")
	requireFailure(t, run(t, url, nil, "", "user", "reset-password", "999999"), "there is no user 999999")
	requireUsageError(t, run(t, url, nil, "", "user", "enable", "clerk@acme.example"), `"clerk@acme.example" is not an id`)
	requireUsageError(t, run(t, url, nil, "", "user", "disable"), "want 1 argument")
	requireUsageError(t, run(t, url, nil, "", "user", "delete", "1"), `unknown subcommand "delete"`)
}

func TestIntegrationListRotateRevoke(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	url := migrated(t)
	pool := pgtest.PoolFor(t, url)
	require.NoError(t, run(t, url, nil, "", "message-type", "create", "--tenant", "acme", "EVENT").err)
	created := run(t, url, nil, "", "integration", "create", "--tenant", "acme", "--env", "production",
		"--message-type", "EVENT", "--scheme", "github").lines()
	id, first := created[0], created[1]
	bearer := run(t, url, nil, "", "integration", "create", "--tenant", "acme", "--env", "production",
		"--message-type", "EVENT", "--scheme", "bearer").lines()[0]

	list := func() map[string][]string {
		r := run(t, url, nil, "", "integration", "list")
		require.NoError(t, r.err)
		require.NotContains(t, r.stdout, first, "a secret is never listed")
		rows := map[string][]string{}
		for _, line := range r.lines() {
			fields := strings.Split(line, "\t")
			require.Len(t, fields, 9, line)
			rows[fields[0]+" "+fields[5]] = fields
		}
		return rows
	}
	rows := list()
	require.Len(t, rows, 2)
	require.Equal(t, []string{"-", "-", "-", "-"}, rows[bearer+" -"][5:], "a bearer integration has no secrets")

	rotated := run(t, url, nil, "", "integration", "rotate", id, "--grace", "2h")
	require.NoError(t, rotated.err)
	second := rotated.lines()[0]
	require.NotEqual(t, first, second)
	states := map[string]string{}
	for key, fields := range list() {
		states[key] = fields[6]
	}
	var firstID, secondID string
	require.NoError(t, pool.QueryRow(ctx, `SELECT min(id)::text, max(id)::text FROM integration_secrets`).Scan(&firstID, &secondID))
	require.Equal(t, map[string]string{id + " " + firstID: "expiring", id + " " + secondID: "active", bearer + " -": "-"}, states)

	require.NoError(t, run(t, url, nil, "", "integration", "revoke", id, "--secret", firstID).err)
	require.Equal(t, "revoked", list()[id+" "+firstID][6])
	require.Equal(t, "active", list()[id+" "+secondID][6])
	require.NoError(t, run(t, url, nil, "", "integration", "revoke", id).err)
	require.Equal(t, "revoked", list()[id+" "+secondID][6], "without --secret every secret is revoked")

	var events int
	require.NoError(t, pool.QueryRow(ctx, `SELECT count(*) FROM audit_events
		WHERE actor = 'cli' AND action IN ('integration.secret_added', 'integration.secret_revoked')`).Scan(&events))
	require.Equal(t, 3, events)

	requireFailure(t, run(t, url, nil, "", "integration", "rotate", bearer), "API keys")
	requireFailure(t, run(t, url, nil, "", "integration", "revoke", bearer), "no secret to revoke")
	requireFailure(t, run(t, url, nil, "", "integration", "revoke", id, "--secret", "999999"), "there is no secret 999999")
	requireFailure(t, run(t, url, nil, "", "integration", "revoke", "3f1c2d4e-0000-4000-8000-000000000000"), "there is no integration")
	requireFailure(t, run(t, url, nil, "", "integration", "rotate", id, "--grace", "800h"), "grace period")
	requireUsageError(t, run(t, url, nil, "", "integration", "rotate"), "want 1 argument")
	requireUsageError(t, run(t, url, nil, "", "integration", "delete", id), `unknown subcommand "delete"`)
}
