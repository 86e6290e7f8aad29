package schema_test

import (
	"context"
	"testing"

	"github.com/riverqueue/river/riverdriver/riverpgxv5"
	"github.com/riverqueue/river/rivermigrate"
	"github.com/stretchr/testify/require"

	"github.com/lefia/edihub/internal/pgtest"
	"github.com/lefia/edihub/internal/schema"
	"github.com/lefia/edihub/migrations"
)

func TestMigrateEmptyDatabaseThenNoOp(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool := pgtest.PoolFor(t, pgtest.EmptyURL(t))

	upToDate, err := schema.UpToDate(ctx, pool)
	require.NoError(t, err)
	require.False(t, upToDate)

	applied, err := schema.Migrate(ctx, pool)
	require.NoError(t, err)
	require.Positive(t, applied)

	again, err := schema.Migrate(ctx, pool)
	require.NoError(t, err)
	require.Zero(t, again, "re-applying migrations must be a no-op")

	upToDate, err = schema.UpToDate(ctx, pool)
	require.NoError(t, err)
	require.True(t, upToDate)
}

func TestFingerprintIndexIsExactlyAsSpecified(t *testing.T) {
	t.Parallel()
	pool := pgtest.Pool(t)
	var def string
	err := pool.QueryRow(context.Background(),
		`SELECT indexdef FROM pg_indexes WHERE tablename = 'messages' AND indexname = 'uq_messages_fingerprint'`,
	).Scan(&def)
	require.NoError(t, err)
	require.Equal(t,
		"CREATE UNIQUE INDEX uq_messages_fingerprint ON public.messages USING btree (tenant_id, environment_id, fingerprint) WHERE (fingerprint IS NOT NULL)",
		def)
}

func TestAuditEventsAreAppendOnly(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool := pgtest.Pool(t)
	_, err := pool.Exec(ctx, `INSERT INTO audit_events (action, actor) VALUES ('user.created', 'cli')`)
	require.NoError(t, err)
	_, err = pool.Exec(ctx, `UPDATE audit_events SET actor = 'someone else'`)
	require.ErrorContains(t, err, "append-only")
	_, err = pool.Exec(ctx, `DELETE FROM audit_events`)
	require.ErrorContains(t, err, "append-only")
}

// River's tables are at the newest version the River library knows: an
// upgrade of River that brings a schema change needs an edihub migration
// to the new version (see migrations.RiverVersion).
func TestRiverSchemaIsWhatTheLibraryExpects(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool := pgtest.Pool(t)
	migrator, err := rivermigrate.New(riverpgxv5.New(pool), nil)
	require.NoError(t, err)
	all := migrator.AllVersions()
	require.Equal(t, all[len(all)-1].Version, migrations.RiverVersion, "add a migration to River's newest schema version")
	res, err := migrator.Validate(ctx, nil)
	require.NoError(t, err)
	require.True(t, res.OK, "River's migrations are all applied: %v", res.Messages)
}
