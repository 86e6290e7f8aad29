package cli_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/lefia/edihub/internal/db"
	"github.com/lefia/edihub/internal/delivery"
	"github.com/lefia/edihub/internal/ingest"
	"github.com/lefia/edihub/internal/messagetype"
	"github.com/lefia/edihub/internal/pgtest"
)

// store stores a message of the tenant's one message type in its one
// environment, as the API of another process would; its deliveries are
// queued and stay pending while no worker runs.
func store(t *testing.T, url, tenant, docnum string) {
	t.Helper()
	ctx := context.Background()
	pool := pgtest.PoolFor(t, url)
	var tenantID, envID, typeID int64
	require.NoError(t, pool.QueryRow(ctx, `SELECT t.id, e.id, mt.id FROM tenants t
		JOIN environments e ON e.tenant_id = t.id JOIN message_types mt ON mt.tenant_id = t.id
		WHERE t.slug = $1`, tenant).Scan(&tenantID, &envID, &typeID))
	mt, err := db.On(pool).MessageTypeGetByID(ctx, db.MessageTypeGetByIDParams{TenantID: tenantID, ID: typeID})
	require.NoError(t, err)
	_, err = ingest.New(pool, time.Hour, delivery.NewService(pool, 10)).Receive(ctx, ingest.Request{
		TenantID: tenantID, EnvironmentID: envID, MessageType: messagetype.Prepare(mt), Docnum: docnum, Payload: []byte(`{}`),
		Source: ingest.Source{Endpoint: ingest.EndpointReceiveMessage, Actor: "test"},
	})
	require.NoError(t, err)
}

// table reads a table a list command printed: its header's columns and
// each row's cells, split where the header's columns begin.
func table(t *testing.T, r result) (header []string, rows [][]string) {
	t.Helper()
	require.NoError(t, r.err)
	lines := r.lines()
	var starts []int
	for i := 0; i < len(lines[0]); i++ {
		if lines[0][i] != ' ' && (i == 0 || strings.HasSuffix(lines[0][:i], "  ")) {
			starts = append(starts, i)
		}
	}
	cells := func(line string) []string {
		out := make([]string, len(starts))
		for i, start := range starts {
			end := len(line)
			if i+1 < len(starts) {
				end = min(starts[i+1], len(line))
			}
			require.True(t, start == 0 || line[start-1] == ' ', "column %d of %q is aligned", i, line)
			out[i] = strings.TrimSpace(line[min(start, end):end])
		}
		return out
	}
	for _, line := range lines[1:] {
		rows = append(rows, cells(line))
	}
	return cells(lines[0]), rows
}

// Every list prints an aligned table with a header; with --tenant it shows
// only that tenant's, as the tenant's admins see them.
func TestLists(t *testing.T) {
	t.Parallel()
	url := migrated(t)
	loopback := map[string]string{"DESTINATION_ALLOWED_CIDRS": "127.0.0.1/32"}
	cli := func(vars map[string]string, args ...string) {
		t.Helper()
		require.NoError(t, run(t, url, vars, "", args...).err, "edihub %v", args)
	}
	cli(nil, "tenant", "create", "globex", "--name", "Globex Inc.")
	cli(nil, "env", "create", "--tenant", "globex", "staging")
	for _, tenant := range []struct{ slug, env, code string }{{"acme", "production", "ORDERS05"}, {"globex", "staging", "INVOIC02"}} {
		cli(nil, "message-type", "create", "--tenant", tenant.slug, tenant.code, "--window-hours", "24")
		cli(loopback, "destination", "create", "--tenant", tenant.slug, "--env", tenant.env, "--url", "http://127.0.0.1:9/"+tenant.slug)
		cli(nil, "channel", "create", "--tenant", tenant.slug, "--email", "ops@"+tenant.slug+".example")
	}
	cli(nil, "channel", "create", "--email", "root@example.com", "--name", "everyone")
	store(t, url, "acme", "4711")
	store(t, url, "globex", "4712")
	store(t, url, "globex", "4713")

	header, rows := table(t, run(t, url, nil, "", "tenant", "list"))
	require.Equal(t, []string{"SLUG", "NAME", "CREATED"}, header)
	require.Equal(t, []string{"acme", "acme"}, rows[0][:2])
	require.Equal(t, []string{"globex", "Globex Inc."}, rows[1][:2])

	header, rows = table(t, run(t, url, nil, "", "env", "list"))
	require.Equal(t, []string{"TENANT", "ENVIRONMENT"}, header)
	require.Equal(t, [][]string{{"acme", "production"}, {"globex", "staging"}}, rows)
	_, rows = table(t, run(t, url, nil, "", "env", "list", "--tenant", "globex"))
	require.Equal(t, [][]string{{"globex", "staging"}}, rows)

	header, rows = table(t, run(t, url, nil, "", "message-type", "list", "--tenant", "acme"))
	require.Equal(t, []string{"TENANT", "CODE", "WINDOW", "KEY PATHS"}, header)
	require.Equal(t, [][]string{{"acme", "ORDERS05", "24h", "-"}}, rows)

	header, rows = table(t, run(t, url, nil, "", "destination", "list", "--tenant", "globex"))
	require.Equal(t, []string{"ID", "TENANT", "ENVIRONMENT", "URL", "MESSAGE TYPES", "STATE", "CONCURRENCY"}, header)
	require.Len(t, rows, 1)
	globexDestination := rows[0][0]
	require.Equal(t, []string{"globex", "staging", "http://127.0.0.1:9/globex", "every type", "running"}, rows[0][1:6])

	header, rows = table(t, run(t, url, nil, "", "channel", "list"))
	require.Equal(t, []string{"ID", "TENANT", "KIND", "NAME", "TARGET"}, header)
	require.Len(t, rows, 3)
	require.Equal(t, []string{"-", "email", "everyone", "root@example.com"}, rows[0][1:], "the global channel first")
	_, rows = table(t, run(t, url, nil, "", "channel", "list", "--tenant", "acme"))
	require.Len(t, rows, 1, "a tenant sees its channels, not the global ones")
	require.Equal(t, "ops@acme.example", rows[0][4])

	header, rows = table(t, run(t, url, nil, "", "delivery", "list"))
	require.Equal(t, []string{"ID", "CREATED", "STATUS", "ATTEMPTS", "TENANT", "ENVIRONMENT", "TYPE", "DOCNUM",
		"DESTINATION", "URL", "LAST ANSWER", "LAST ERROR"}, header)
	require.Len(t, rows, 3)
	require.Equal(t, []string{"pending", "0", "globex", "staging", "INVOIC02", "4713", globexDestination}, rows[0][2:9], "newest first")
	_, rows = table(t, run(t, url, nil, "", "delivery", "list", "--tenant", "acme"))
	require.Len(t, rows, 1)
	require.Equal(t, "4711", rows[0][7])
	_, rows = table(t, run(t, url, nil, "", "delivery", "list", "--destination", globexDestination, "--limit", "1"))
	require.Len(t, rows, 1)
	require.Equal(t, "4713", rows[0][7])
	_, rows = table(t, run(t, url, nil, "", "delivery", "list", "--status", "pending", "--tenant", "globex"))
	require.Len(t, rows, 2)
	header, rows = table(t, run(t, url, nil, "", "delivery", "list", "--status", "failed"))
	require.NotEmpty(t, header)
	require.Empty(t, rows, "no delivery failed")

	requireFailure(t, run(t, url, nil, "", "env", "list", "--tenant", "initech"), `tenant "initech" does not exist`)
	requireUsageError(t, run(t, url, nil, "", "delivery", "list", "--limit", "0"), "--limit must be from 1 to 1000")
	requireUsageError(t, run(t, url, nil, "", "delivery", "list", "--status", "lost"), `"lost" is not a delivery status`)
	requireUsageError(t, run(t, url, nil, "", "tenant", "list", "acme"), "want 0 argument(s)")
}
