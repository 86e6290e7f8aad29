package migrations

import (
	"context"
	"database/sql"
	"fmt"

	"github.com/pressly/goose/v3"
	"github.com/riverqueue/river/riverdriver/riverdatabasesql"
	"github.com/riverqueue/river/rivermigrate"
)

// RiverVersion is the version of River's own schema (its migration line
// "main") that edihub's migrations bring a database to. River's tables hold
// the delivery jobs; they are created by River's migrator, not copied SQL, so
// they are exactly what the River library expects. Upgrading River to a
// release with newer schema versions means adding an edihub migration that
// targets the new version; a test fails until that is done.
const RiverVersion = 8

// Go holds the migrations written in Go, merged by version with the SQL
// files.
var Go = []*goose.Migration{
	goose.NewGoMigration(5,
		&goose.GoFunc{RunDB: func(ctx context.Context, db *sql.DB) error { return migrateRiver(ctx, db, RiverVersion) }},
		&goose.GoFunc{RunDB: func(ctx context.Context, db *sql.DB) error { return migrateRiver(ctx, db, -1) }},
	),
}

// migrateRiver moves River's schema to version (-1 removes River's
// tables). It cannot run inside one transaction: a River version adds an
// enum value that a later version uses, which PostgreSQL refuses within the
// transaction that added it. River's migrator applies each version in a
// transaction of its own and records it, so a run cut short is completed
// by the next, which skips the versions already applied.
func migrateRiver(ctx context.Context, db *sql.DB, version int) error {
	migrator, err := rivermigrate.New(riverdatabasesql.New(db), nil)
	if err != nil {
		return fmt.Errorf("river migrator: %w", err)
	}
	direction := rivermigrate.DirectionUp
	if version < 0 {
		direction = rivermigrate.DirectionDown
	}
	if _, err := migrator.Migrate(ctx, direction, &rivermigrate.MigrateOpts{TargetVersion: version}); err != nil {
		return fmt.Errorf("migrate river schema %s: %w", direction, err)
	}
	return nil
}
