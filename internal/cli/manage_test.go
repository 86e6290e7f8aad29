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
	first := run(t, url, nil, "", "apikey", "create", "--tenant", "acme", "--env", "production").lines()[0]
	second := run(t, url, nil, "", "apikey", "create", "--tenant", "acme", "--env", "production").lines()[0]

	r := run(t, url, nil, "", "apikey", "list")
	require.NoError(t, r.err)
	require.Len(t, r.lines(), 2)
	byPrefix := map[string][]string{}
	for _, line := range r.lines() {
		fields := strings.Split(line, "\t")
		require.Len(t, fields, 7, line)
		byPrefix[fields[3]] = fields
		require.Equal(t, []string{"acme", "production", "active"}, []string{fields[1], fields[2], fields[4]})
		require.Equal(t, "-", fields[6])
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
