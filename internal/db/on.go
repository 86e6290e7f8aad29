package db

import (
	"context"
	"errors"

	"github.com/jackc/pgx/v5"
)

// On returns the queries run on conn: a pool, a connection, a transaction
// or CustomPlans. A lookup that matches no row fails with ErrNotFound, so
// that no caller compares driver errors. Use it rather than the generated
// New, which leaves pgx.ErrNoRows as it is.
func On(conn DBTX) *Queries { return New(notFoundAsSentinel{conn}) }

// notFoundAsSentinel is conn with the one driver error that means "no
// row" replaced by ErrNotFound. Only a read of one row (QueryRow) can
// report it: Query returns an empty set and Exec a count.
type notFoundAsSentinel struct{ DBTX }

func (c notFoundAsSentinel) QueryRow(ctx context.Context, sql string, args ...any) pgx.Row {
	return notFoundRow{c.DBTX.QueryRow(ctx, sql, args...)}
}

type notFoundRow struct{ pgx.Row }

func (r notFoundRow) Scan(dest ...any) error {
	err := r.Row.Scan(dest...)
	if errors.Is(err, pgx.ErrNoRows) {
		return ErrNotFound
	}
	return err
}
