package db_test

import (
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/lefia/edihub/internal/db"
	"github.com/lefia/edihub/internal/pgtest"
)

func TestOnReportsNoRowAsErrNotFound(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool := pgtest.Pool(t)

	_, err := db.On(pool).TenantGetBySlug(ctx, "nobody")
	require.ErrorIs(t, err, db.ErrNotFound)
	require.NotErrorIs(t, err, pgx.ErrNoRows, "callers compare one sentinel, not the driver's")
	require.False(t, db.IsUnavailable(err))

	err = db.WithTx(ctx, pool, func(q *db.Queries) error {
		_, err := q.TenantGetBySlug(ctx, "nobody")
		return err
	})
	require.ErrorIs(t, err, db.ErrNotFound, "inside a transaction too")

	_, err = db.On(db.CustomPlans{Pool: pool}).TenantGetBySlug(ctx, "nobody")
	require.ErrorIs(t, err, db.ErrNotFound, "and with custom plans")

	_, err = db.On(pool).TenantInsert(ctx, db.TenantInsertParams{Slug: "acme", Name: "ACME"})
	require.NoError(t, err)
	_, err = db.On(pool).TenantGetBySlug(ctx, "acme")
	require.NoError(t, err)
}

// TestQueriesAreMadeByOn keeps the not-found translation in one place: the
// generated New would hand callers pgx.ErrNoRows, which they no longer
// recognise as a missing row.
func TestQueriesAreMadeByOn(t *testing.T) {
	t.Parallel()
	generatedNew := regexp.MustCompile(`\bdb\.New\(`)
	root, err := filepath.Abs("../..")
	require.NoError(t, err)
	var offenders []string
	err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && strings.HasPrefix(d.Name(), ".") && path != root {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, ".go") {
			return nil
		}
		src, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		if generatedNew.Match(src) {
			offenders = append(offenders, strings.TrimPrefix(path, root+string(filepath.Separator)))
		}
		return nil
	})
	require.NoError(t, err)
	require.Empty(t, offenders, "make queries with db.On")
}
