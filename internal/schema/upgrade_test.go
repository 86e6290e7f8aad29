package schema_test

import (
	"context"
	"testing"

	"github.com/jackc/pgx/v5/stdlib"
	"github.com/pressly/goose/v3"
	"github.com/stretchr/testify/require"

	"github.com/lefia/edihub/internal/pgtest"
	"github.com/lefia/edihub/internal/schema"
	"github.com/lefia/edihub/migrations"
)

// An integration's secret from before integrations could hold several is
// carried over as its one current secret; a bearer integration, which had an
// empty secret, gets none.
func TestIntegrationSecretsMigrated(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool := pgtest.PoolFor(t, pgtest.EmptyURL(t))
	db := stdlib.OpenDBFromPool(pool)
	defer db.Close()
	p, err := goose.NewProvider(goose.DialectPostgres, db, migrations.FS)
	require.NoError(t, err)
	_, err = p.UpTo(ctx, 3)
	require.NoError(t, err)

	_, err = pool.Exec(ctx, `
		INSERT INTO tenants (slug, name) VALUES ('acme', 'Acme');
		INSERT INTO environments (tenant_id, slug) VALUES (1, 'production');
		INSERT INTO message_types (tenant_id, code) VALUES (1, 'EVENT');
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
