package db

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
)

// OwnTransactions sends each batch of statements (a Batch, or a call sent
// with One) as a transaction of its own, in one round trip: BEGIN, the SET
// LOCAL of generic plans, the statements, COMMIT. It is for statements
// that decide everything they write by themselves, such as a replay of
// Idempotency-Keys or a group of retransmissions, which need no
// transaction around them but must not be planned again on every call:
// sent alone on the pool, in autocommit, a statement over array
// parameters gets a custom plan each time (see PipelinedBegin), which cost
// PostgreSQL about a quarter more a blocked retransmission than the same
// statement on its generic plan. The answers are read when COMMIT has
// returned, so an answer read means committed; when a statement fails,
// PostgreSQL skips the COMMIT and nothing is committed.
//
// Statements must be sent as batches: Exec, Query and QueryRow fail.
type OwnTransactions struct {
	Pool *pgxpool.Pool
	// Durable makes the COMMIT wait until the WAL is on disk (and, with a
	// synchronous standby, on the standby too) even when the pool's
	// connections commit without waiting (synchronous_commit off): for a
	// transaction that what comes after its answer builds on, and that
	// must therefore not be lost in a crash or a failover once answered.
	Durable bool
	// Confirm, when set and true for a transaction, follows its COMMIT
	// with CommitConfirmed in the same round trip; a commit that no
	// synchronous standby confirmed then fails Close with
	// ErrCommitUnconfirmed (see PipelinedBegin).
	Confirm func() bool
}

// setGenericPlansDurably is setGenericPlans for a Durable transaction.
const setGenericPlansDurably = "SELECT set_config('plan_cache_mode', 'force_generic_plan', true), set_config('synchronous_commit', 'on', true)"

// errBatchesOnly is what OwnTransactions answers a statement not sent as a
// batch.
var errBatchesOnly = errors.New("db.OwnTransactions sends batches only (db.One, Batch.Send)")

// SendBatch sends b between BEGIN and COMMIT in one round trip. The
// answers of the BEGIN and the SET LOCAL are read here, the COMMIT's when
// the results are closed, so the caller reads b's own answers as from any
// batch; when the BEGIN fails, every answer of b fails.
func (o OwnTransactions) SendBatch(ctx context.Context, b *pgx.Batch) pgx.BatchResults {
	conn, err := o.Pool.Acquire(ctx)
	if err != nil {
		return pgx.FailedBatchResults(b, fmt.Errorf("acquire a connection: %w", err))
	}
	whole := &pgx.Batch{}
	whole.Queue("BEGIN")
	if o.Durable {
		whole.Queue(setGenericPlansDurably)
	} else {
		whole.Queue(setGenericPlans)
	}
	whole.QueuedQueries = append(whole.QueuedQueries, b.QueuedQueries...)
	whole.Queue("COMMIT")
	confirm := o.Confirm != nil && o.Confirm()
	if confirm {
		whole.Queue(commitConfirmed)
	}
	results := &ownTxResults{BatchResults: conn.SendBatch(ctx, whole), ctx: ctx, conn: conn, unread: len(b.QueuedQueries), confirm: confirm}
	for range 2 {
		if _, err := results.BatchResults.Exec(); err != nil {
			_ = results.Close()
			return pgx.FailedBatchResults(b, fmt.Errorf("begin transaction: %w", err))
		}
	}
	return results
}

// ownTxResults reads a batch sent by OwnTransactions. Close reads what is
// left, the COMMIT's answer last, and gives the connection back; one left
// in a failed transaction is rolled back first, so that the pool keeps it.
type ownTxResults struct {
	pgx.BatchResults
	ctx  context.Context
	conn *pgxpool.Conn
	// unread counts the caller's statements whose answers are not read
	// yet; confirm says that CommitConfirmed follows the COMMIT.
	unread  int
	confirm bool
	closed  bool
}

func (r *ownTxResults) Exec() (pgconn.CommandTag, error) {
	r.unread--
	return r.BatchResults.Exec()
}

func (r *ownTxResults) Query() (pgx.Rows, error) {
	r.unread--
	return r.BatchResults.Query()
}

func (r *ownTxResults) QueryRow() pgx.Row {
	r.unread--
	return r.BatchResults.QueryRow()
}

func (r *ownTxResults) Close() error {
	if r.closed {
		return nil
	}
	r.closed = true
	var err error
	if r.confirm {
		err = r.readConfirmation()
	}
	if closeErr := r.BatchResults.Close(); err == nil {
		err = closeErr
	}
	if pc := r.conn.Conn().PgConn(); !pc.IsClosed() && pc.TxStatus() != 'I' {
		if _, rollbackErr := r.conn.Exec(context.WithoutCancel(r.ctx), "ROLLBACK"); rollbackErr != nil && err == nil {
			err = fmt.Errorf("roll back: %w", rollbackErr)
		}
	}
	r.conn.Release()
	return err
}

func (OwnTransactions) Exec(context.Context, string, ...any) (pgconn.CommandTag, error) {
	return pgconn.CommandTag{}, errBatchesOnly
}

func (OwnTransactions) Query(context.Context, string, ...any) (pgx.Rows, error) {
	return nil, errBatchesOnly
}

func (OwnTransactions) QueryRow(context.Context, string, ...any) pgx.Row {
	return errRow{errBatchesOnly}
}

// readConfirmation reads past the caller's unread answers to the COMMIT's
// and CommitConfirmed's. The first error among them is the batch's: a
// statement that failed kept the COMMIT from running.
func (r *ownTxResults) readConfirmation() error {
	var first error
	for ; r.unread > 0; r.unread-- {
		if _, err := r.BatchResults.Exec(); err != nil && first == nil {
			first = err
		}
	}
	if first != nil {
		return first
	}
	return readConfirmation(r.BatchResults)
}
