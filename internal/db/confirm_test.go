package db_test

import (
	"context"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"

	"github.com/lefia/edihub/internal/db"
	"github.com/lefia/edihub/internal/pgtest"
)

// A confirmed commit (PipelinedBegin and OwnTransactions with Confirm)
// says whether a synchronous standby has it: on a primary whose standby
// is asynchronous, as pg_auto_failover leaves one that goes on alone
// (synchronous_standby_names cleared, the standby's slot kept), the
// transaction is committed and the commit fails with
// ErrCommitUnconfirmed; once the standby is synchronous it succeeds. A
// statement that fails keeps its own error and commits nothing.
func TestConfirmedCommitsSayWhetherAStandbyHasThem(t *testing.T) {
	t.Parallel()
	primary := pgtest.NewCluster(t)
	primary.NewStandby()
	primary.Exec(`CREATE TABLE confirmed (n int PRIMARY KEY)`)
	pool := pgtest.PoolFor(t, primary.URL())
	ctx := context.Background()

	pipelined := func(n int) error {
		return db.WithPgxTx(ctx, db.PipelinedBegin{Pool: pool, Confirm: true}, func(tx pgx.Tx) error {
			b := &pgx.Batch{}
			b.Queue(`INSERT INTO confirmed VALUES ($1)`, n)
			return tx.SendBatch(ctx, b).Close()
		})
	}
	own := func(n int) error {
		b := &pgx.Batch{}
		b.Queue(`INSERT INTO confirmed VALUES ($1)`, n)
		b.Queue(`SELECT 1`)
		results := db.OwnTransactions{Pool: pool, Confirm: func() bool { return true }}.SendBatch(ctx, b)
		if _, err := results.Exec(); err != nil {
			_ = results.Close()
			return err
		}
		// The second answer is left unread: Close reads past it.
		return results.Close()
	}

	require.ErrorIs(t, pipelined(1), db.ErrCommitUnconfirmed, "an asynchronous standby confirms nothing")
	require.ErrorIs(t, own(2), db.ErrCommitUnconfirmed)
	require.Equal(t, []int{1, 2}, confirmedRows(t, pool), "unconfirmed, yet committed on the primary")

	primary.Synchronous(pgtest.StandbySlot)
	require.NoError(t, pipelined(3), "the synchronous standby confirms")
	require.NoError(t, own(4))

	require.Error(t, pipelined(3), "a failing statement")
	require.NotErrorIs(t, pipelined(3), db.ErrCommitUnconfirmed, "keeps its own error")
	require.Error(t, own(4))
	require.NotErrorIs(t, own(4), db.ErrCommitUnconfirmed)
	require.Equal(t, []int{1, 2, 3, 4}, confirmedRows(t, pool))
	require.Zero(t, pool.Stat().AcquiredConns(), "every connection is back in the pool")
}

// A single server, with no standby to wait for, confirms every commit.
func TestConfirmedCommitsOnASingleServer(t *testing.T) {
	t.Parallel()
	pool := pgtest.Pool(t)
	ctx := context.Background()
	err := db.WithPgxTx(ctx, db.PipelinedBegin{Pool: pool, Confirm: true}, func(tx pgx.Tx) error {
		_, err := tx.Exec(ctx, `INSERT INTO tenants (slug, name) VALUES ('single', 'single')`)
		return err
	})
	require.NoError(t, err)
	b := &pgx.Batch{}
	b.Queue(`INSERT INTO tenants (slug, name) VALUES ('alone', 'alone')`)
	require.NoError(t, db.OwnTransactions{Pool: pool, Confirm: func() bool { return true }}.SendBatch(ctx, b).Close())
	var n int
	require.NoError(t, pool.QueryRow(ctx, `SELECT count(*) FROM tenants WHERE slug IN ('single', 'alone')`).Scan(&n))
	require.Equal(t, 2, n)
}

func confirmedRows(t *testing.T, pool *pgxpool.Pool) []int {
	t.Helper()
	rows, err := pool.Query(context.Background(), `SELECT n FROM confirmed ORDER BY n`)
	require.NoError(t, err)
	ns, err := pgx.CollectRows(rows, pgx.RowTo[int])
	require.NoError(t, err)
	return ns
}
