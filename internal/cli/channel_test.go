package cli_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/lefia/edihub/internal/pgtest"
)

func TestChannelCreate(t *testing.T) {
	t.Parallel()
	url := migrated(t)
	pool := pgtest.PoolFor(t, url)
	loopback := map[string]string{"DESTINATION_ALLOWED_CIDRS": "127.0.0.0/8"}
	channels := func() int { return pgtest.Count(t, pool, `SELECT count(*) FROM notification_channels`) }

	r := run(t, url, nil, "", "channel", "create", "--tenant", "acme", "--email", "ops@acme.example")
	require.NoError(t, r.err)
	require.Len(t, r.lines(), 1, "the id; an email channel has no secret")
	require.Regexp(t, `^[0-9]+$`, r.lines()[0])
	require.Equal(t, 1, pgtest.Count(t, pool,
		`SELECT count(*) FROM notification_channels c JOIN tenants t ON t.id = c.tenant_id WHERE t.slug = 'acme' AND c.name = 'ops@acme.example'`),
		"named after its address")

	r = run(t, url, loopback, "", "channel", "create", "--webhook", "http://127.0.0.1:9000/alerts", "--name", "pager")
	require.NoError(t, r.err)
	require.Len(t, r.lines(), 2, "the id, then the generated secret")
	require.True(t, strings.HasPrefix(r.lines()[1], "whsec_"))
	require.Equal(t, 1, pgtest.Count(t, pool, `SELECT count(*) FROM notification_channels WHERE tenant_id IS NULL AND name = 'pager'`),
		"without --tenant, a global channel")

	const secret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"
	r = run(t, url, loopback, "", "channel", "create", "--tenant", "acme", "--webhook", "http://127.0.0.1:9000/x", "--secret", secret)
	require.NoError(t, r.err)
	require.Equal(t, secret, r.lines()[1], "a given secret is kept")
	require.NoError(t, run(t, url, loopback, "", "channel", "create", "--tenant", "acme", "--slack", "http://127.0.0.1:9000/services/T/B/X").err)
	require.Equal(t, 4, channels())

	requireFailure(t, run(t, url, nil, "", "channel", "create", "--tenant", "acme", "--email", "not an address"), "not an email address")
	requireFailure(t, run(t, url, nil, "", "channel", "create", "--email", "Ops <ops@acme.example>"), "bare email address")
	requireFailure(t, run(t, url, nil, "", "channel", "create", "--slack", "http://127.0.0.1:9000/hook"), "loopback")
	requireFailure(t, run(t, url, nil, "", "channel", "create", "--webhook", "http://169.254.169.254/latest"), "link-local")
	requireFailure(t, run(t, url, loopback, "", "channel", "create", "--webhook", "ftp://127.0.0.1/"), "http://")
	requireFailure(t, run(t, url, loopback, "", "channel", "create", "--webhook", "http://127.0.0.1/", "--secret", "short"), "whsec_")
	requireFailure(t, run(t, url, nil, "", "channel", "create", "--email", "ops@acme.example", "--secret", secret), "only a webhook")
	requireFailure(t, run(t, url, nil, "", "channel", "create", "--tenant", "nobody", "--email", "ops@acme.example"), `tenant "nobody" does not exist`)
	requireUsageError(t, run(t, url, nil, "", "channel", "create", "--tenant", "acme"), "give one of --email, --slack and --webhook")
	requireUsageError(t, run(t, url, loopback, "", "channel", "create", "--email", "ops@acme.example", "--slack", "http://127.0.0.1/"), "not two")
	require.Equal(t, 4, channels(), "nothing stored by a refused command")
	require.Equal(t, 4, pgtest.Count(t, pool, `SELECT count(*) FROM audit_events WHERE action = 'channel.created' AND actor = 'cli'`))
}
