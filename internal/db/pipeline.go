package db

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// Pipeline runs query, a generated query method such as
// (*Queries).IdempotencyKeyReplay, once for each of params, on q's
// transaction (or connection or pool), as one pgx.Batch: the statements go
// to PostgreSQL in one round trip and run one after the other, each as it
// would alone. It returns each call's answer and error, in order, with
// ErrNotFound for a read of one row that found none; err is set when the
// batch as a whole failed, and then no answer is to be trusted. On a pool
// or a connection outside a transaction, the statements are one implicit
// transaction, which PostgreSQL commits once the last has run, or rolls
// back when one fails or the commit does (err); Pipeline returns after
// that end.
//
// The statements' text and the scanning of their answers stay the
// generated ones, so that a pipelined statement is the statement its plan
// test checks: each call runs twice, once against a recorder that queues
// its statement in the batch, and once, after the batch was sent, against
// that statement's answer.
func Pipeline[P, R any](ctx context.Context, q *Queries, query func(*Queries, context.Context, P) (R, error), params []P) (rows []R, errs []error, err error) {
	conn := q.db
	if n, ok := conn.(notFoundAsSentinel); ok {
		conn = n.DBTX
	}
	sender, ok := conn.(interface {
		SendBatch(context.Context, *pgx.Batch) pgx.BatchResults
	})
	if !ok {
		return nil, nil, fmt.Errorf("pipeline: %T cannot send a batch", conn)
	}
	rec := &recorder{}
	for i, p := range params {
		if _, err := query(New(rec), ctx, p); !errors.Is(err, errRecorded) {
			return nil, nil, fmt.Errorf("pipeline: call %d did not reach the database: %v", i+1, err)
		}
		if rec.batch.Len() != i+1 {
			return nil, nil, fmt.Errorf("pipeline: call %d made %d statements, not one", i+1, rec.batch.Len()-i)
		}
	}
	if len(params) == 0 {
		return nil, nil, nil
	}
	results := sender.SendBatch(ctx, &rec.batch)
	defer func() {
		if closeErr := results.Close(); err == nil && closeErr != nil {
			err = fmt.Errorf("pipeline: %w", closeErr)
		}
	}()
	rows, errs = make([]R, len(params)), make([]error, len(params))
	for i, p := range params {
		rows[i], errs[i] = query(On(answers{results}), ctx, p)
	}
	return rows, errs, nil
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
