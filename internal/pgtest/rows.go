package pgtest

import (
	"context"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// Count returns the number a query such as SELECT count(*) FROM … selects.
func Count(tb testing.TB, pool *pgxpool.Pool, query string, args ...any) int {
	tb.Helper()
	var n int
	if err := pool.QueryRow(context.Background(), query, args...).Scan(&n); err != nil {
		tb.Fatalf("count: %v\n%s", err, query)
	}
	return n
}

// Column returns, in the query's order, the values of the one column a
// query selects; nil when it selects no row.
func Column[T any](tb testing.TB, pool *pgxpool.Pool, query string, args ...any) []T {
	tb.Helper()
	rows, err := pool.Query(context.Background(), query, args...)
	if err == nil {
		var values []T
		if values, err = pgx.AppendRows(values, rows, pgx.RowTo[T]); err == nil {
			return values
		}
	}
	tb.Fatalf("read column: %v\n%s", err, query)
	return nil
}
