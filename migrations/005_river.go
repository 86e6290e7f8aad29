package migrations

import (
	"context"
	"database/sql"
	"fmt"

	"github.com/pressly/goose/v3"
	"github.com/riverqueue/river/riverdriver/riverdatabasesql"
	"github.com/riverqueue/river/rivermigrate"
)

// riverSteps are edihub's migrations that move River's own schema (its
// migration line "main"), which holds the delivery jobs. River's migrator
// creates the tables, not copied SQL, so they are exactly what the River
// library expects. Each step pins the River version it brings a database
// to, so that a migration once applied means the same thing forever:
// upgrading River to a release with a newer schema adds a step and never
// edits one (TestRiverSchemaIsWhatTheLibraryExpects fails until it is
// added). A step's Down returns to the previous step's version.
var riverSteps = []struct {
	migration    int64 // edihub's (goose) version of the step
	riverVersion int   // River's schema version after it
}{
	{migration: 5, riverVersion: 8},
}

// RiverVersion is the version of River's schema that edihub's migrations
// bring a database to: the last step's.
var RiverVersion = riverSteps[len(riverSteps)-1].riverVersion

// Go holds the migrations written in Go, merged by version with the SQL
// files.
var Go = riverMigrations()

func riverMigrations() []*goose.Migration {
	steps := make([]*goose.Migration, len(riverSteps))
	previous := -1 // no River tables at all
	for i, step := range riverSteps {
		up, down := step.riverVersion, previous
		steps[i] = goose.NewGoMigration(step.migration,
			&goose.GoFunc{RunDB: func(ctx context.Context, db *sql.DB) error { return migrateRiver(ctx, db, up) }},
			&goose.GoFunc{RunDB: func(ctx context.Context, db *sql.DB) error { return migrateRiver(ctx, db, down) }},
		)
		previous = step.riverVersion
	}
	return steps
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
