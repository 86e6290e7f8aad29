package db

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"
)

// Beginner is what WithTx needs: a pool or a connection.
type Beginner interface {
	Begin(ctx context.Context) (pgx.Tx, error)
}

// WithTx runs fn inside one transaction and commits it when fn returns nil.
// Any error, or a panic, rolls everything back, so a failed request leaves
// nothing half-written.
func WithTx(ctx context.Context, conn Beginner, fn func(q *Queries) error) error {
	return WithPgxTx(ctx, conn, func(tx pgx.Tx) error { return fn(On(tx)) })
}

// WithPgxTx is WithTx for work that needs the transaction itself besides
// the queries, such as inserting River jobs in it.
func WithPgxTx(ctx context.Context, conn Beginner, fn func(tx pgx.Tx) error) error {
	tx, err := conn.Begin(ctx)
	if err != nil {
		return fmt.Errorf("begin transaction: %w", err)
	}
	defer func() {
		// Rollback after a successful Commit is a no-op; on the error paths
		// it releases the connection. Its own error adds nothing useful.
		_ = tx.Rollback(context.WithoutCancel(ctx))
	}()
	if err := fn(tx); err != nil {
		return err
	}
	if err := tx.Commit(ctx); err != nil {
		return fmt.Errorf("commit transaction: %w", err)
	}
	return nil
}

// GenericPlans begins transactions in which every prepared statement runs
// on its generic plan, made once per connection. Left to choose, PostgreSQL
// plans a statement again on every execution while its plan for the
// parameters at hand is estimated cheaper than the generic one, and for
// statements over array parameters (a batch's messages, a group's ids)
// that is every execution: DeliveryCreateForMessages spent 0.35 ms of each
// call planning, MessageStoreOrBlockAll up to 0.9 ms. The generic plans of
// the statements ingest runs are the ones TestHotStatementsKeepIndexPlans
// proves to read through their indexes, so forcing them also makes the
// plan that runs the plan that is tested. SET LOCAL travels with BEGIN in
// one round trip and ends with the transaction.
type GenericPlans struct {
	Conn interface {
		BeginTx(ctx context.Context, opts pgx.TxOptions) (pgx.Tx, error)
	}
}

// Begin begins a transaction on generic plans.
func (g GenericPlans) Begin(ctx context.Context) (pgx.Tx, error) {
	return g.Conn.BeginTx(ctx, pgx.TxOptions{BeginQuery: "BEGIN; SET LOCAL plan_cache_mode = force_generic_plan"})
}
