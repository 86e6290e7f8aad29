package db

import (
	"context"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/lefia/edihub/internal/pgtest"
)

// The generated batch queries (:batchone) read their rows through the
// same connection, so a row a batch does not find is ErrNotFound too.
func TestOnReportsNoRowOfABatchAsErrNotFound(t *testing.T) {
	t.Parallel()
	conn := On(pgtest.Pool(t)).db
	b := &pgx.Batch{}
	b.Queue(`SELECT 1 WHERE false`)
	b.Queue(`SELECT 2`)
	br := conn.SendBatch(context.Background(), b)
	var n int
	require.ErrorIs(t, br.QueryRow().Scan(&n), ErrNotFound)
	require.NoError(t, br.QueryRow().Scan(&n))
	require.Equal(t, 2, n)
	require.NoError(t, br.Close())
}
