package db

import (
	"context"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// CustomPlans runs every query on its pool as an unnamed prepared statement
// (pgx.QueryExecModeCacheDescribe), which PostgreSQL plans with the actual
// parameter values each time. Queries whose filters are optional,
// "($3::text IS NULL OR e.action = $3)", then have the unused filters
// folded away, and the planner picks the index that fits the filters given.
// A cached named statement may, from its sixth run on, switch to one
// generic plan for every combination of filters (PostgreSQL does when it
// estimates that plan no dearer than the custom ones so far), and no single
// plan fits them all. Use it as On(CustomPlans{Pool: pool}); Pool may be a
// transaction too.
type CustomPlans struct {
	Pool DBTX
}

func (p CustomPlans) Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error) {
	return p.Pool.Exec(ctx, sql, args...)
}

func (p CustomPlans) Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error) {
	return p.Pool.Query(ctx, sql, append([]any{pgx.QueryExecModeCacheDescribe}, args...)...)
}

func (p CustomPlans) QueryRow(ctx context.Context, sql string, args ...any) pgx.Row {
	return p.Pool.QueryRow(ctx, sql, append([]any{pgx.QueryExecModeCacheDescribe}, args...)...)
}
