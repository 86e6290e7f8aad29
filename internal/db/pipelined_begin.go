package db

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
)

// PipelinedBegin begins transactions whose BEGIN costs no round trip of
// its own: it is sent ahead of the transaction's first batch of statements
// (a Batch sent with Send), in the same round trip, and PostgreSQL runs the
// batch inside the transaction it opens (pgx's Batch.BeginTx, which the
// pool sends on a connection that the transaction then keeps until it
// ends). A transaction whose first statement is sent otherwise begins with
// a round trip of its own. Ingest's transactions start with a batch (the
// claim locks, the decision and the deliveries), so each is a round trip
// shorter.
//
// Every prepared statement of such a transaction runs on its generic plan,
// made once per connection. Left to choose, PostgreSQL plans a statement
// again on every execution while its plan for the parameters at hand is
// estimated cheaper than the generic one, and for statements over array
// parameters (a batch's messages, a group's ids) that is every execution,
// at a cost docs/performance.md measures. The generic plans of the statements
// ingest runs are the ones TestHotStatementsKeepIndexPlans proves to read
// through their indexes, so forcing them also makes the plan that runs the
// plan that is tested. SET LOCAL travels with BEGIN and ends with the
// transaction.
//
// With Confirm, the COMMIT is followed, in its round trip, by
// CommitConfirmed, and a commit that no synchronous standby confirmed
// fails with ErrCommitUnconfirmed: it is committed, on one machine.
type PipelinedBegin struct {
	Pool    *pgxpool.Pool
	Confirm bool
}

// setGenericPlans makes the transaction's prepared statements run on their
// generic plans; SET LOCAL ends with the transaction.
const setGenericPlans = "SET LOCAL plan_cache_mode = force_generic_plan"

// Begin returns a transaction that begins with its first statement.
func (p PipelinedBegin) Begin(context.Context) (pgx.Tx, error) {
	return &lazyTx{pool: p.Pool, confirm: p.Confirm}, nil
}

// lazyTx is a transaction that its first statement begins; from then on it
// holds a connection of the pool, conn, with the transaction tx on it,
// until it ends. Before that, it holds nothing. It holds the connection
// itself, rather than through the pool's transaction, so that a confirmed
// commit can read CommitConfirmed on the connection that committed.
type lazyTx struct {
	pool    *pgxpool.Pool
	confirm bool
	conn    *pgxpool.Conn // nil until begun
	tx      pgx.Tx        // the transaction on conn, nil until begun
	closed  bool
}

// begin begins the transaction on its own, for a first statement that is
// not a batch, and returns it.
func (t *lazyTx) begin(ctx context.Context) (pgx.Tx, error) {
	if t.closed {
		return nil, pgx.ErrTxClosed
	}
	if t.tx == nil {
		conn, err := t.pool.Acquire(ctx)
		if err != nil {
			return nil, fmt.Errorf("begin transaction: %w", err)
		}
		tx, err := conn.BeginTx(ctx, pgx.TxOptions{BeginQuery: "BEGIN; " + setGenericPlans})
		if err != nil {
			conn.Release()
			return nil, fmt.Errorf("begin transaction: %w", err)
		}
		t.conn, t.tx = conn, tx
	}
	return t.tx, nil
}

// release gives the connection back to the pool, which closes one left
// inside a transaction.
func (t *lazyTx) release() {
	if t.conn != nil {
		t.conn.Release()
		t.conn = nil
	}
}

// SendBatch sends b, begun by the transaction's BEGIN when b is its first
// statement. The answers of the BEGIN and the SET LOCAL are read here, so
// the caller reads b's own answers as from any batch; when they fail,
// every answer of b fails.
func (t *lazyTx) SendBatch(ctx context.Context, b *pgx.Batch) pgx.BatchResults {
	switch {
	case t.closed:
		return pgx.FailedBatchResults(b, pgx.ErrTxClosed)
	case t.tx != nil:
		return t.tx.SendBatch(ctx, b)
	}
	conn, err := t.pool.Acquire(ctx)
	if err != nil {
		return pgx.FailedBatchResults(b, fmt.Errorf("begin transaction: %w", err))
	}
	first := &pgx.Batch{}
	first.BeginTx(pgx.TxOptions{})
	first.Queue(setGenericPlans)
	first.QueuedQueries = append(first.QueuedQueries, b.QueuedQueries...)
	results := conn.SendBatch(ctx, first)
	t.conn, t.tx = conn, results.Tx()
	for range 2 {
		if _, err := results.Exec(); err != nil {
			_ = results.Close()
			return pgx.FailedBatchResults(b, fmt.Errorf("begin transaction: %w", err))
		}
	}
	return results
}

func (t *lazyTx) Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error) {
	tx, err := t.begin(ctx)
	if err != nil {
		return pgconn.CommandTag{}, err
	}
	return tx.Exec(ctx, sql, args...)
}

func (t *lazyTx) Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error) {
	tx, err := t.begin(ctx)
	if err != nil {
		return nil, err
	}
	return tx.Query(ctx, sql, args...)
}

func (t *lazyTx) QueryRow(ctx context.Context, sql string, args ...any) pgx.Row {
	tx, err := t.begin(ctx)
	if err != nil {
		return errRow{err}
	}
	return tx.QueryRow(ctx, sql, args...)
}

func (t *lazyTx) CopyFrom(ctx context.Context, table pgx.Identifier, columns []string, rows pgx.CopyFromSource) (int64, error) {
	tx, err := t.begin(ctx)
	if err != nil {
		return 0, err
	}
	return tx.CopyFrom(ctx, table, columns, rows)
}

func (t *lazyTx) Prepare(ctx context.Context, name, sql string) (*pgconn.StatementDescription, error) {
	tx, err := t.begin(ctx)
	if err != nil {
		return nil, err
	}
	return tx.Prepare(ctx, name, sql)
}

// Begin begins a nested transaction (a savepoint), beginning this one
// first if need be.
func (t *lazyTx) Begin(ctx context.Context) (pgx.Tx, error) {
	tx, err := t.begin(ctx)
	if err != nil {
		return nil, err
	}
	return tx.Begin(ctx)
}

// Commit commits the transaction; one that never began has nothing to
// commit.
func (t *lazyTx) Commit(ctx context.Context) error {
	if t.closed {
		return pgx.ErrTxClosed
	}
	t.closed = true
	if t.tx == nil {
		return nil
	}
	defer t.release()
	if !t.confirm {
		return t.tx.Commit(ctx)
	}
	return commitConfirming(ctx, t.conn.Conn())
}

// commitConfirming sends COMMIT and CommitConfirmed in one round trip on
// conn, whose transaction it ends. The transaction's own object is left
// behind: the connection is outside any transaction afterwards, or, when
// the round trip failed midway, closed by the pool on its release.
func commitConfirming(ctx context.Context, conn *pgx.Conn) error {
	b := &pgx.Batch{}
	b.Queue("COMMIT")
	b.Queue(commitConfirmed)
	results := conn.SendBatch(ctx, b)
	err := readConfirmation(results)
	if closeErr := results.Close(); err == nil {
		err = closeErr
	}
	return err
}

// readConfirmation reads the answers of a COMMIT and of the
// CommitConfirmed after it.
func readConfirmation(results pgx.BatchResults) error {
	tag, err := results.Exec()
	switch {
	case err != nil:
		return err
	case tag.String() == "ROLLBACK":
		return pgx.ErrTxCommitRollback
	}
	var confirmed bool
	if err := results.QueryRow().Scan(&confirmed); err != nil {
		return fmt.Errorf("read whether a standby confirmed the commit: %w", err)
	}
	if !confirmed {
		return ErrCommitUnconfirmed
	}
	return nil
}

// Rollback rolls the transaction back; one that never began has nothing
// to roll back. After Commit it does nothing.
func (t *lazyTx) Rollback(ctx context.Context) error {
	if t.closed {
		return pgx.ErrTxClosed
	}
	t.closed = true
	if t.tx == nil {
		return nil
	}
	defer t.release()
	return t.tx.Rollback(ctx)
}

// LargeObjects is the transaction's once it began; edihub keeps none, and
// before that the zero value's methods fail.
func (t *lazyTx) LargeObjects() pgx.LargeObjects {
	if t.tx == nil {
		return pgx.LargeObjects{}
	}
	return t.tx.LargeObjects()
}

// Conn is the transaction's connection, nil before it began.
func (t *lazyTx) Conn() *pgx.Conn {
	if t.tx == nil {
		return nil
	}
	return t.tx.Conn()
}

// errRow is a row that could not be read because the transaction could
// not begin.
type errRow struct{ err error }

func (r errRow) Scan(...any) error { return r.err }
