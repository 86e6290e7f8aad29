package db_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/lefia/edihub/internal/db"
	"github.com/lefia/edihub/internal/pgtest"
)

func TestKeyFieldsRoundTrip(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	q := db.On(pgtest.Pool(t))
	tenant, err := q.TenantInsert(ctx, db.TenantInsertParams{Slug: "acme", Name: "ACME"})
	require.NoError(t, err)

	paths := db.KeyFields{`[*.IDOC.E1EDK02]|@flatten|#(QUALF=="001").BELNR`, "*.IDOC.EDI_DC40.MESTYP"}
	for code, fields := range map[string]db.KeyFields{"PATHS": paths, "NONE": nil} {
		_, err := q.MessageTypeInsert(ctx, db.MessageTypeInsertParams{TenantID: tenant.ID, Code: code, DuplicateKeyFields: fields})
		require.NoError(t, err, "no paths are stored as [], which the column's check accepts")
	}
	got, err := q.MessageTypeGetByCode(ctx, db.MessageTypeGetByCodeParams{TenantID: tenant.ID, Code: "PATHS"})
	require.NoError(t, err)
	require.Equal(t, paths, got.DuplicateKeyFields, "in order")
	got, err = q.MessageTypeGetByCode(ctx, db.MessageTypeGetByCodeParams{TenantID: tenant.ID, Code: "NONE"})
	require.NoError(t, err)
	require.Empty(t, got.DuplicateKeyFields)
}
