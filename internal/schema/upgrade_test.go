package schema_test

import (
	"context"
	"testing"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/jackc/pgx/v5/stdlib"
	"github.com/pressly/goose/v3"
	"github.com/stretchr/testify/require"

	"github.com/lefia/edihub/internal/pgtest"
	"github.com/lefia/edihub/internal/schema"
	"github.com/lefia/edihub/migrations"
)

// migratedTo is an empty database migrated up to version, and the provider
// that migrates it on (or back); the test's cleanup closes both.
func migratedTo(t *testing.T, version int64) (*pgxpool.Pool, *goose.Provider) {
	t.Helper()
	pool := pgtest.PoolFor(t, pgtest.EmptyURL(t))
	db := stdlib.OpenDBFromPool(pool)
	t.Cleanup(func() { db.Close() })
	p, err := goose.NewProvider(goose.DialectPostgres, db, migrations.FS, goose.WithGoMigrations(migrations.Go...))
	require.NoError(t, err)
	_, err = p.UpTo(t.Context(), version)
	require.NoError(t, err)
	return pool, p
}

// acmeWithAType is a tenant (1) with an environment (1) and a message type
// (1), which the rows of an upgrade test belong to.
const acmeWithAType = `
	INSERT INTO tenants (slug, name) VALUES ('acme', 'Acme');
	INSERT INTO environments (tenant_id, slug) VALUES (1, 'production');
	INSERT INTO message_types (tenant_id, code) VALUES (1, 'EVENT');`

// An integration's secret from before integrations could hold several is
// carried over as its one current secret; a bearer integration, which had an
// empty secret, gets none.
func TestIntegrationSecretsMigrated(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool, _ := migratedTo(t, 3)

	_, err := pool.Exec(ctx, acmeWithAType+`
		INSERT INTO integrations (id, tenant_id, environment_id, message_type_id, scheme, secret) VALUES
			('00000000-0000-4000-8000-000000000001', 1, 1, 1, 'github', 'It''s a Secret to Everybody'),
			('00000000-0000-4000-8000-000000000002', 1, 1, 1, 'bearer', '')`)
	require.NoError(t, err)

	_, err = schema.Migrate(ctx, pool)
	require.NoError(t, err)
	rows, err := pool.Query(ctx, `SELECT integration_id::text, secret, expires_at IS NULL FROM integration_secrets`)
	require.NoError(t, err)
	type row struct {
		integration, secret string
		current             bool
	}
	var got []row
	for rows.Next() {
		var r row
		require.NoError(t, rows.Scan(&r.integration, &r.secret, &r.current))
		got = append(got, r)
	}
	require.NoError(t, rows.Err())
	require.Equal(t, []row{{"00000000-0000-4000-8000-000000000001", "It's a Secret to Everybody", true}}, got)
}

// Open copies of one changed content, kept one per arrival before the
// review queue counted arrivals, fold into the first of them, which counts
// them all; other content and decided copies stay as they were.
func TestRepeatedBlockedCopiesFolded(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool, _ := migratedTo(t, 32)

	_, err := pool.Exec(ctx, acmeWithAType+`
		INSERT INTO messages (tenant_id, environment_id, message_type_id, payload, content_hash, source_endpoint)
		VALUES (1, 1, 1, '{}', sha256('original'), 'receive-message');
		WITH ev AS (
			INSERT INTO audit_events (tenant_id, action, actor, details, created_at)
			SELECT 1, 'message.duplicate_blocked', 'api', '{}', now() - (6 - g) * interval '1 minute'
			FROM generate_series(1, 5) g
			RETURNING id, created_at
		)
		INSERT INTO blocked_copies (tenant_id, environment_id, message_type_id, audit_event_id, received_at,
		                            original_message_id, payload, content_hash, sender,
		                            dismissed_at, dismissed_by, dismiss_reason)
		SELECT 1, 1, 1, ev.id, ev.created_at, 1, '{}',
		       CASE WHEN ev.id = 4 THEN sha256('other') ELSE sha256('changed') END, '{}',
		       CASE WHEN ev.id = 5 THEN now() END, CASE WHEN ev.id = 5 THEN 1 END, CASE WHEN ev.id = 5 THEN 'seen' END
		FROM ev`)
	require.NoError(t, err)

	_, err = schema.Migrate(ctx, pool)
	require.NoError(t, err)
	rows, err := pool.Query(ctx, `SELECT audit_event_id, copies, review_state,
		last_seen_at = (SELECT created_at FROM audit_events WHERE id = 3)
		FROM blocked_copies ORDER BY id`)
	require.NoError(t, err)
	type row struct {
		event       int64
		copies      int32
		state       string
		lastIsThird *bool
	}
	var got []row
	for rows.Next() {
		var r row
		require.NoError(t, rows.Scan(&r.event, &r.copies, &r.state, &r.lastIsThird))
		got = append(got, r)
	}
	require.NoError(t, rows.Err())
	yes := true
	require.Equal(t, []row{{1, 3, "open", &yes}, {4, 1, "open", nil}, {5, 1, "dismissed", nil}}, got)
}

// A message stored without its view (migration 040) must keep the bytes it
// came as; going back below 040 is refused while such a message exists, and
// goes through once none does.
func TestViewsRebuiltMigration(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool, p := migratedTo(t, 40)
	_, err := pool.Exec(ctx, acmeWithAType)
	require.NoError(t, err)
	insert := `INSERT INTO messages (tenant_id, environment_id, message_type_id, payload, content_hash, source_endpoint,
		remote_addr, content_type, received_bytes, edi_frame)
		VALUES (1, 1, 1, $1, sha256(''), 'receive-message', '127.0.0.1', 'application/edi-x12', $2, $3)`
	_, err = pool.Exec(ctx, insert, nil, nil, nil)
	require.ErrorContains(t, err, "messages_view_kept", "neither the view nor the bytes")
	_, err = pool.Exec(ctx, insert, nil, []byte("ST*850*1~SE*2*1~"), `{"element":42}`)
	require.NoError(t, err)

	_, err = p.DownTo(ctx, 39)
	require.ErrorContains(t, err, "stored without their JSON view")
	_, err = pool.Exec(ctx, `UPDATE messages SET payload = '{"ST":[]}'`)
	require.NoError(t, err)
	_, err = p.DownTo(ctx, 39)
	require.NoError(t, err)
	_, err = pool.Exec(ctx, insert, nil, []byte("ST*850*1~SE*2*1~"), nil)
	require.Error(t, err, "payload is NOT NULL again below 040")
}
