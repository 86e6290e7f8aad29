package db

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// Batch holds calls of generated query methods, of any kinds, to be sent
// to PostgreSQL in one round trip (a pgx.Batch), where they run one after
// the other, each as it would alone: a statement that must wait for a lock
// and the statement that must run after it cost one round trip instead of
// two. The zero Batch is empty and ready.
//
// The statements' text and the scanning of their answers stay the
// generated ones, so that a batched statement is the statement its plan
// test checks: each call runs twice, once against a recorder that queues
// its statement in the batch (Queue), and once, after the batch was sent,
// against that statement's answer (Send).
type Batch struct {
	rec     recorder
	answers []func(q *Queries) // each reads its call's answer
}

// Queue adds the call query(ctx, p) to b. Once b is sent, *row and *err
// are the call's answer and error, ErrNotFound for a read of one row that
// found none. An error here means the call did not queue one statement
// (not a generated query method), and nothing was added.
func Queue[P, R any](ctx context.Context, b *Batch, query func(*Queries, context.Context, P) (R, error), p P, row *R, err *error) error {
	queued := b.rec.batch.Len()
	_, e := query(New(&b.rec), ctx, p)
	if n := b.rec.batch.Len() - queued; n != 1 || !errors.Is(e, errRecorded) {
		b.rec.batch.QueuedQueries = b.rec.batch.QueuedQueries[:queued]
		if n == 0 {
			return fmt.Errorf("the call did not reach the database: %v", e)
		}
		return fmt.Errorf("the call made %d statements, not one", n)
	}
	b.answers = append(b.answers, func(q *Queries) { *row, *err = query(q, ctx, p) })
	return nil
}

// One sends the one call query(ctx, p) as a batch of its own and returns
// its answer, or the batch's error when the call has none: as the first
// statement of a transaction begun by PipelinedBegin, it carries the BEGIN
// in its round trip, where a call made directly would cost one more.
func One[P, R any](ctx context.Context, q *Queries, query func(*Queries, context.Context, P) (R, error), p P) (R, error) {
	var (
		b   Batch
		row R
		err error
	)
	if e := Queue(ctx, &b, query, p, &row, &err); e != nil {
		return row, e
	}
	if e := b.Send(ctx, q); e != nil && err == nil {
		err = e
	}
	return row, err
}

// Exec turns a generated :exec query method, which answers only an error,
// into one that Queue takes.
func Exec[P any](query func(*Queries, context.Context, P) error) func(*Queries, context.Context, P) (struct{}, error) {
	return func(q *Queries, ctx context.Context, p P) (struct{}, error) { return struct{}{}, query(q, ctx, p) }
}

// Send sends b's statements on q's transaction (or connection or pool) in
// one round trip and sets every queued call's answer. err is set when the
// batch as a whole failed; then no answer is to be trusted.
func (b *Batch) Send(ctx context.Context, q *Queries) (err error) {
	if len(b.answers) == 0 {
		return nil
	}
	conn := q.db
	if n, ok := conn.(notFoundAsSentinel); ok {
		conn = n.DBTX
	}
	sender, ok := conn.(interface {
		SendBatch(context.Context, *pgx.Batch) pgx.BatchResults
	})
	if !ok {
		return fmt.Errorf("pipeline: %T cannot send a batch", conn)
	}
	results := sender.SendBatch(ctx, &b.rec.batch)
	defer func() {
		if closeErr := results.Close(); err == nil && closeErr != nil {
			err = fmt.Errorf("pipeline: %w", closeErr)
		}
	}()
	answered := On(answers{results})
	for _, answer := range b.answers {
		answer(answered)
	}
	return nil
}

// errRecorded is what a recorded statement answers: it has not run yet.
var errRecorded = errors.New("recorded for a pipeline")

// recorder queues every statement it is given in its batch.
type recorder struct{ batch pgx.Batch }

func (r *recorder) Exec(_ context.Context, sql string, args ...any) (pgconn.CommandTag, error) {
	r.batch.Queue(sql, args...)
	return pgconn.CommandTag{}, errRecorded
}

func (r *recorder) Query(_ context.Context, sql string, args ...any) (pgx.Rows, error) {
	r.batch.Queue(sql, args...)
	return nil, errRecorded
}

func (r *recorder) QueryRow(_ context.Context, sql string, args ...any) pgx.Row {
	r.batch.Queue(sql, args...)
	return recordedRow{}
}

type recordedRow struct{}

func (recordedRow) Scan(...any) error { return errRecorded }

// answers gives each statement the next answer of a sent batch, in the
// order the statements were queued.
type answers struct{ pgx.BatchResults }

func (a answers) Exec(context.Context, string, ...any) (pgconn.CommandTag, error) {
	return a.BatchResults.Exec()
}

func (a answers) Query(context.Context, string, ...any) (pgx.Rows, error) {
	return a.BatchResults.Query()
}

func (a answers) QueryRow(context.Context, string, ...any) pgx.Row {
	return a.BatchResults.QueryRow()
}
