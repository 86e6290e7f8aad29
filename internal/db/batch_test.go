package db_test

import (
	"context"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/lefia/edihub/internal/db"
	"github.com/lefia/edihub/internal/pgtest"
)

// A Batch runs calls of different kinds in one round trip, in order, each
// as it would alone: an :exec, a :one that finds a row, a :one that finds
// none, and later statements see what earlier ones wrote.
func TestBatchRunsCallsOfEveryKindInOrder(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool := pgtest.Pool(t)

	var (
		inserted, found, missing           db.Tenant
		locked                             struct{}
		lockErr, insertErr, findErr, noErr error
	)
	err := db.WithTx(ctx, pool, func(q *db.Queries) error {
		var b db.Batch
		require.NoError(t, db.Queue(ctx, &b, db.Exec((*db.Queries).MessageClaimLocks), db.MessageClaimLocksParams{ClaimLocks: []int64{7, 3}, Shared: []bool{false, false}}, &locked, &lockErr))
		require.NoError(t, db.Queue(ctx, &b, (*db.Queries).TenantInsert, db.TenantInsertParams{Slug: "acme", Name: "ACME"}, &inserted, &insertErr))
		require.NoError(t, db.Queue(ctx, &b, (*db.Queries).TenantGetBySlug, "acme", &found, &findErr))
		require.NoError(t, db.Queue(ctx, &b, (*db.Queries).TenantGetBySlug, "nobody", &missing, &noErr))
		if err := b.Send(ctx, q); err != nil {
			return err
		}
		// The advisory locks last as long as the transaction.
		var held int
		require.NoError(t, pool.QueryRow(ctx,
			`SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND objid IN (3, 7) AND granted`).Scan(&held))
		require.Equal(t, 2, held)
		return nil
	})
	require.NoError(t, err)
	require.NoError(t, lockErr)
	require.NoError(t, insertErr)
	require.NoError(t, findErr)
	require.Equal(t, inserted.ID, found.ID, "the read sees the insert before it")
	require.ErrorIs(t, noErr, db.ErrNotFound)
}

// A failing call fails the batch's transaction: the calls after it do not
// run, and nothing of the batch is kept.
func TestBatchFailsAsAWhole(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool := pgtest.Pool(t)

	var first, second db.Tenant
	var firstErr, secondErr error
	err := db.WithPgxTx(ctx, pool, func(tx pgx.Tx) error {
		var b db.Batch
		require.NoError(t, db.Queue(ctx, &b, (*db.Queries).TenantInsert, db.TenantInsertParams{Slug: "acme", Name: "ACME"}, &first, &firstErr))
		require.NoError(t, db.Queue(ctx, &b, (*db.Queries).TenantInsert, db.TenantInsertParams{Slug: "acme", Name: "again"}, &second, &secondErr))
		if err := b.Send(ctx, db.On(tx)); err != nil {
			return err
		}
		return secondErr
	})
	require.Error(t, err)
	_, unique := db.UniqueViolation(secondErr)
	require.True(t, unique, "%v", secondErr)
	_, err = db.On(pool).TenantGetBySlug(ctx, "acme")
	require.ErrorIs(t, err, db.ErrNotFound, "the first insert rolled back with the second")
}

// Queue takes generated query methods only: a call that reaches no
// statement, or makes two, is refused before anything is sent.
func TestQueueRefusesWhatIsNotOneStatement(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	var b db.Batch
	var n int
	var err error
	none := func(*db.Queries, context.Context, int) (int, error) { return 0, nil }
	require.ErrorContains(t, db.Queue(ctx, &b, none, 1, &n, &err), "did not reach the database")
	two := func(q *db.Queries, ctx context.Context, _ int) (int, error) {
		_, _ = q.TenantGetBySlug(ctx, "a")
		_, err := q.TenantGetBySlug(ctx, "b")
		return 0, err
	}
	require.ErrorContains(t, db.Queue(ctx, &b, two, 1, &n, &err), "2 statements")
	require.NoError(t, b.Send(ctx, db.On(nil)), "nothing was queued, so nothing is sent")
}

// One sends a call as a batch of its own: as a transaction's first
// statement it carries the BEGIN, so the transaction is two round trips
// (the call, the COMMIT); it answers the call's row, and the call's own
// error, ErrNotFound for a read that finds nothing.
func TestOneTravelsWithTheBegin(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool, counted := pgtest.CountedPool(t, 1)

	before := counted.Count()
	var inserted db.Tenant
	require.NoError(t, db.WithPgxTx(ctx, db.PipelinedBegin{Pool: pool}, func(tx pgx.Tx) error {
		var err error
		inserted, err = db.One(ctx, db.On(tx), (*db.Queries).TenantInsert, db.TenantInsertParams{Slug: "acme", Name: "ACME"})
		return err
	}))
	require.EqualValues(t, 2, counted.Count()-before, "the call with its BEGIN, then the COMMIT")

	found, err := db.One(ctx, db.On(pool), (*db.Queries).TenantGetBySlug, "acme")
	require.NoError(t, err)
	require.Equal(t, inserted.ID, found.ID)
	_, err = db.One(ctx, db.On(pool), (*db.Queries).TenantGetBySlug, "nobody")
	require.ErrorIs(t, err, db.ErrNotFound)
}
