package db_test

import (
	"context"
	"errors"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/lefia/edihub/internal/db"
	"github.com/lefia/edihub/internal/pgtest"
)

func planMode(t *testing.T, q interface {
	QueryRow(context.Context, string, ...any) pgx.Row
}) string {
	t.Helper()
	var mode string
	require.NoError(t, q.QueryRow(context.Background(), `SHOW plan_cache_mode`).Scan(&mode))
	return mode
}

// A transaction begun by PipelinedBegin opens with its first batch, in the
// same round trip, runs on generic plans, and commits or rolls back as any
// transaction; the connection goes back to the pool choosing its plans.
func TestPipelinedBeginOpensWithTheFirstBatch(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool, counted := pgtest.CountedPool(t, 1)

	for _, commit := range []bool{true, false} {
		slug := map[bool]string{true: "kept", false: "rolled-back"}[commit]
		before := counted.Count()
		err := db.WithPgxTx(ctx, db.PipelinedBegin{Pool: pool}, func(tx pgx.Tx) error {
			var b db.Batch
			var tenant db.Tenant
			var insertErr error
			require.NoError(t, db.Queue(ctx, &b, (*db.Queries).TenantInsert, db.TenantInsertParams{Slug: slug, Name: slug}, &tenant, &insertErr))
			require.NoError(t, b.Send(ctx, db.On(tx)))
			require.NoError(t, insertErr)
			require.Equal(t, "force_generic_plan", planMode(t, tx))
			if !commit {
				return errRolledBack
			}
			return nil
		})
		if commit {
			require.NoError(t, err)
		} else {
			require.ErrorIs(t, err, errRolledBack)
		}
		require.EqualValues(t, 3, counted.Count()-before, "the batch with its BEGIN, the SHOW, the COMMIT or ROLLBACK")
		_, err = db.On(pool).TenantGetBySlug(ctx, slug)
		if commit {
			require.NoError(t, err)
		} else {
			require.ErrorIs(t, err, db.ErrNotFound)
		}
		require.Equal(t, "auto", planMode(t, pool), "SET LOCAL ended with the transaction")
	}
}

// errRolledBack is what the tests return to roll a transaction back.
var errRolledBack = errors.New("rolled back on purpose")

// A first statement sent alone begins the transaction with a round trip
// of its own; a transaction with no statement sends nothing.
func TestPipelinedBeginWithoutABatch(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool, counted := pgtest.CountedPool(t, 1)

	before := counted.Count()
	require.NoError(t, db.WithPgxTx(ctx, db.PipelinedBegin{Pool: pool}, func(pgx.Tx) error { return nil }))
	require.Zero(t, counted.Count()-before, "nothing begun, nothing to commit")

	err := db.WithPgxTx(ctx, db.PipelinedBegin{Pool: pool}, func(tx pgx.Tx) error {
		_, err := db.On(tx).TenantInsert(ctx, db.TenantInsertParams{Slug: "alone", Name: "alone"})
		require.NoError(t, err)
		require.Equal(t, "force_generic_plan", planMode(t, tx))
		return errRolledBack
	})
	require.ErrorIs(t, err, errRolledBack)
	_, err = db.On(pool).TenantGetBySlug(ctx, "alone")
	require.ErrorIs(t, err, db.ErrNotFound)

	// A savepoint begins the transaction too, and ends inside it.
	tx, err := db.PipelinedBegin{Pool: pool}.Begin(ctx)
	require.NoError(t, err)
	nested, err := tx.Begin(ctx)
	require.NoError(t, err)
	_, err = db.On(nested).TenantInsert(ctx, db.TenantInsertParams{Slug: "nested", Name: "nested"})
	require.NoError(t, err)
	require.NoError(t, nested.Commit(ctx))
	require.NoError(t, tx.Rollback(ctx))
	require.ErrorIs(t, tx.Commit(ctx), pgx.ErrTxClosed)
	_, err = db.On(pool).TenantGetBySlug(ctx, "nested")
	require.ErrorIs(t, err, db.ErrNotFound, "the savepoint rolled back with its transaction")
}

// A statement that fails aborts the transaction: COMMIT then reports the
// rollback, nothing is kept, and the connection is fit for the next
// transaction.
func TestPipelinedBeginAfterAFailure(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool, _ := pgtest.CountedPool(t, 1)
	_, err := db.On(pool).TenantInsert(ctx, db.TenantInsertParams{Slug: "taken", Name: "taken"})
	require.NoError(t, err)

	tx, err := db.PipelinedBegin{Pool: pool}.Begin(ctx)
	require.NoError(t, err)
	defer func() { _ = tx.Rollback(ctx) }() // gives the pool its one connection back if the test fails
	var b db.Batch
	var first, second db.Tenant
	var firstErr, secondErr error
	require.NoError(t, db.Queue(ctx, &b, (*db.Queries).TenantInsert, db.TenantInsertParams{Slug: "new", Name: "new"}, &first, &firstErr))
	require.NoError(t, db.Queue(ctx, &b, (*db.Queries).TenantInsert, db.TenantInsertParams{Slug: "taken", Name: "again"}, &second, &secondErr))
	err = b.Send(ctx, db.On(tx))
	_, unique := db.UniqueViolation(err)
	require.True(t, unique, "the batch fails with its statement: %v", err)
	require.NoError(t, firstErr)
	_, unique = db.UniqueViolation(secondErr)
	require.True(t, unique, "%v", secondErr)
	require.ErrorIs(t, tx.Commit(ctx), pgx.ErrTxCommitRollback)

	_, err = db.On(pool).TenantGetBySlug(ctx, "new")
	require.ErrorIs(t, err, db.ErrNotFound, "the first insert rolled back with the second")
	require.NoError(t, db.WithPgxTx(ctx, db.PipelinedBegin{Pool: pool}, func(tx pgx.Tx) error {
		_, err := db.On(tx).TenantInsert(ctx, db.TenantInsertParams{Slug: "next", Name: "next"})
		return err
	}))
	_, err = db.On(pool).TenantGetBySlug(ctx, "next")
	require.NoError(t, err)
}
