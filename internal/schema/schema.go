// Package schema applies edihub's embedded SQL migrations and reports whether
// a database is up to date.
package schema

import (
	"context"
	"database/sql"
	"fmt"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/jackc/pgx/v5/stdlib"
	"github.com/pressly/goose/v3"
	"github.com/pressly/goose/v3/lock"

	"github.com/lefia/edihub/migrations"
)

// Migrate applies every pending migration and returns how many it applied.
// Applying an up-to-date database is a no-op. goose takes a PostgreSQL
// advisory lock, so two servers starting at once do not both migrate.
func Migrate(ctx context.Context, pool *pgxpool.Pool) (int, error) {
	return withProvider(pool, func(p *goose.Provider) (int, error) {
		results, err := p.Up(ctx)
		if err != nil {
			return 0, fmt.Errorf("apply migrations: %w", err)
		}
		return len(results), nil
	})
}

// UpToDate reports whether every embedded migration has been applied.
func UpToDate(ctx context.Context, pool *pgxpool.Pool) (bool, error) {
	pending := false
	_, err := withProvider(pool, func(p *goose.Provider) (int, error) {
		var err error
		pending, err = p.HasPending(ctx)
		if err != nil {
			return 0, fmt.Errorf("read migration status: %w", err)
		}
		return 0, nil
	})
	return !pending && err == nil, err
}

// MigrateDB applies pending migrations through database/sql, for callers
// that hold a *sql.DB rather than a pool (the test database templates).
func MigrateDB(ctx context.Context, db *sql.DB) error {
	p, err := newProvider(db)
	if err != nil {
		return err
	}
	if _, err := p.Up(ctx); err != nil {
		return fmt.Errorf("apply migrations: %w", err)
	}
	return nil
}

func withProvider(pool *pgxpool.Pool, fn func(*goose.Provider) (int, error)) (int, error) {
	db := stdlib.OpenDBFromPool(pool)
	defer db.Close()
	p, err := newProvider(db)
	if err != nil {
		return 0, err
	}
	return fn(p)
}

func newProvider(db *sql.DB) (*goose.Provider, error) {
	locker, err := lock.NewPostgresSessionLocker()
	if err != nil {
		return nil, fmt.Errorf("create migration lock: %w", err)
	}
	p, err := goose.NewProvider(goose.DialectPostgres, db, migrations.FS,
		goose.WithSessionLocker(locker), goose.WithGoMigrations(migrations.Go...))
	if err != nil {
		return nil, fmt.Errorf("load migrations: %w", err)
	}
	return p, nil
}
