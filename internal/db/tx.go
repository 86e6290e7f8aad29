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
