package db_test

import (
	"context"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/lefia/edihub/internal/db"
	"github.com/lefia/edihub/internal/pgtest"
)

// A transaction begun by GenericPlans runs on generic plans, and the
// setting ends with it: the connection goes back to choosing.
func TestGenericPlansLastTheTransaction(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	conn, err := pgtest.Pool(t).Acquire(ctx)
	require.NoError(t, err)
	defer conn.Release()
	mode := func(q interface {
		QueryRow(context.Context, string, ...any) pgx.Row
	}) string {
		var m string
		require.NoError(t, q.QueryRow(ctx, `SHOW plan_cache_mode`).Scan(&m))
		return m
	}
	require.Equal(t, "auto", mode(conn))
	for _, end := range []func(pgx.Tx) error{
		func(tx pgx.Tx) error { return tx.Commit(ctx) },
		func(tx pgx.Tx) error { return tx.Rollback(ctx) },
	} {
		tx, err := db.GenericPlans{Conn: conn}.Begin(ctx)
		require.NoError(t, err)
		require.Equal(t, "force_generic_plan", mode(tx))
		require.NoError(t, end(tx))
		require.Equal(t, "auto", mode(conn))
	}
}
