// Package migrations holds edihub's SQL schema migrations, embedded in the
// binary so that `edihub migrate` and `edihub serve` need no files on disk.
package migrations

import "embed"

// FS holds the goose migrations, named NNN_description.sql.
//
//go:embed *.sql
var FS embed.FS
