package db_test

import (
	"context"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/lefia/edihub/internal/db"
	"github.com/lefia/edihub/internal/pgtest"
)

// OwnTransactions sends a batch as a transaction of its own in one round
// trip, on generic plans, committed once its answers are read. A batch
// whose statement fails commits none of its statements and leaves its
// connection idle in the pool, choosing its plans again.
func TestOwnTransactionsCommitEachBatchInOneRoundTrip(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool, counted := pgtest.CountedPool(t, 1)
	own := db.OwnTransactions{Pool: pool}

	before := counted.Count()
	b := &pgx.Batch{}
	b.Queue(`INSERT INTO tenants (slug, name) VALUES ('own', 'own')`)
	b.Queue(`SELECT current_setting('plan_cache_mode')`)
	results := own.SendBatch(ctx, b)
	_, err := results.Exec()
	require.NoError(t, err)
	var mode string
	require.NoError(t, results.QueryRow().Scan(&mode))
	require.Equal(t, "force_generic_plan", mode)
	require.NoError(t, results.Close())
	require.EqualValues(t, 1, counted.Count()-before, "BEGIN, SET LOCAL, the statements and COMMIT in one round trip")
	_, err = db.On(pool).TenantGetBySlug(ctx, "own")
	require.NoError(t, err, "committed")
	require.Equal(t, "auto", planMode(t, pool), "SET LOCAL ended with the transaction")

	conns := pool.Stat().NewConnsCount()
	b = &pgx.Batch{}
	b.Queue(`INSERT INTO tenants (slug, name) VALUES ('lost', 'lost')`)
	b.Queue(`INSERT INTO tenants (slug, name) VALUES ('own', 'again')`)
	results = own.SendBatch(ctx, b)
	_, err = results.Exec()
	require.NoError(t, err)
	_, err = results.Exec()
	require.Error(t, err, "the slug is taken")
	require.Error(t, results.Close())
	_, err = db.On(pool).TenantGetBySlug(ctx, "lost")
	require.ErrorIs(t, err, db.ErrNotFound, "the statement before the failed one is not committed")
	require.Equal(t, "auto", planMode(t, pool))
	require.Equal(t, conns, pool.Stat().NewConnsCount(), "the connection was rolled back and kept, not replaced")

	tenant, err := db.One(ctx, db.On(own), (*db.Queries).TenantInsert, db.TenantInsertParams{Slug: "one", Name: "one"})
	require.NoError(t, err, "a generated call sent with db.One")
	got, err := db.On(pool).TenantGetBySlug(ctx, "one")
	require.NoError(t, err)
	require.Equal(t, tenant.ID, got.ID)

	_, err = db.On(own).TenantGetBySlug(ctx, "one")
	require.ErrorContains(t, err, "batches only", "a statement not sent as a batch is refused, not run outside a transaction")
}
