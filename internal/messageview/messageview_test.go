package messageview_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/lefia/edihub/internal/apperr"
	"github.com/lefia/edihub/internal/auth"
	"github.com/lefia/edihub/internal/canon"
	"github.com/lefia/edihub/internal/fingerprint"
	"github.com/lefia/edihub/internal/idocxml"
	"github.com/lefia/edihub/internal/messageview"
	"github.com/lefia/edihub/internal/pgtest"
	"github.com/lefia/edihub/internal/testfactory"
)

func TestGetExplainsTheFingerprint(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool := pgtest.Pool(t)
	acme, env := testfactory.TenantWithEnvironment(t, pool, "acme")
	mt := testfactory.MessageType(t, pool, &testfactory.MessageTypeOpts{
		Fields: []string{"*.IDOC.EDI_DC40.MESTYP", "*.IDOC.E1EDK01.BELNR"},
	})
	globex := testfactory.Tenant(t, pool, &testfactory.TenantOpts{Slug: "globex"})

	payload, err := os.ReadFile(filepath.Join("..", "fingerprint", "testdata", "orders05.json"))
	require.NoError(t, err)
	docnum := "0000000000900101"
	at, err := fingerprint.Compute(fingerprint.Input{
		MessageTypeID: mt.ID, Paths: []string{"*.IDOC.EDI_DC40.MESTYP", "*.IDOC.E1EDK01.BELNR"}, Docnum: docnum, Payload: payload,
	})
	require.NoError(t, err)
	hash, err := canon.ContentHash(payload)
	require.NoError(t, err)
	var id int64
	require.NoError(t, pool.QueryRow(ctx, `INSERT INTO messages (tenant_id, environment_id, message_type_id, docnum,
		payload, content_hash, computed_fingerprint, fingerprint, source_endpoint, remote_addr)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $7, 'receive-message', '192.0.2.7') RETURNING id`,
		acme.ID, env.ID, mt.ID, docnum, payload, hash[:], at.Fingerprint).Scan(&id))

	svc := messageview.New(pool)
	m, err := svc.Get(ctx, auth.GlobalScope(), id)
	require.NoError(t, err)
	require.Equal(t, "acme", m.Tenant)
	require.Equal(t, "production", m.Environment)
	require.Equal(t, "ORDERS05", m.MessageType)
	require.Equal(t, docnum, m.Docnum)
	require.Equal(t, at.Fingerprint, m.Fingerprint)
	require.True(t, m.HoldsFingerprint)
	require.Equal(t, fingerprint.FallbackNone, m.Key.Fallback)
	require.False(t, m.Key.Changed)
	require.Equal(t, at.Values, m.Key.Values)
	var marked []string
	for _, s := range m.Payload.Segments {
		if s.Marked {
			marked = append(marked, s.Text)
		}
	}
	require.Equal(t, []string{`"ORDERS"`, `"4500012345"`}, marked)

	// Another tenant's user finds nothing, as if the message did not exist.
	_, err = svc.Get(ctx, auth.TenantScope(globex.ID), id)
	ae, ok := apperr.As(err)
	require.True(t, ok, "%v", err)
	require.Equal(t, apperr.NotFound, ae.Kind)
	_, err = svc.Get(ctx, auth.TenantScope(acme.ID), id)
	require.NoError(t, err)

	// After the configuration changes, the page says so.
	_, err = pool.Exec(ctx, `UPDATE message_types SET duplicate_key_fields = '["E1EDK01.NOPE"]' WHERE id = $1`, mt.ID)
	require.NoError(t, err)
	m, err = svc.Get(ctx, auth.GlobalScope(), id)
	require.NoError(t, err)
	require.True(t, m.Key.Changed)
	require.Equal(t, fingerprint.FallbackAllMissing, m.Key.Fallback)
	require.NotEqual(t, at.Fingerprint, m.Key.Fingerprint)
	for _, s := range m.Payload.Segments {
		require.False(t, s.Marked, "the docnum was used, not the paths")
	}
}

// A message received as IDoc-XML is stored without its view (migration
// 040): the page rebuilds the view from the bytes, and explains and marks
// the key in it. Bytes that no longer read as an IDoc (a bug, or a row
// changed by hand) leave the page showing them and saying why there is no
// view.
func TestGetRebuildsTheViewOfAnIDocStoredAsXML(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool := pgtest.Pool(t)
	acme, env := testfactory.TenantWithEnvironment(t, pool, "acme")
	paths := []string{"*.IDOC.E1EDK01.BELNR"}
	mt := testfactory.MessageType(t, pool, &testfactory.MessageTypeOpts{Fields: paths})
	xml, err := os.ReadFile(filepath.Join("..", "idocxml", "testdata", "orders05.xml"))
	require.NoError(t, err)
	doc, err := idocxml.Parse(xml, "", idocxml.DefaultLimits)
	require.NoError(t, err)
	docnum := doc.IDocs[0].Docnum
	at, err := fingerprint.Compute(fingerprint.Input{MessageTypeID: mt.ID, Paths: paths, Docnum: docnum, Payload: doc.IDocs[0].View})
	require.NoError(t, err)
	hash, err := canon.ContentHash(doc.IDocs[0].View)
	require.NoError(t, err)
	var id int64
	require.NoError(t, pool.QueryRow(ctx, `INSERT INTO messages (tenant_id, environment_id, message_type_id, docnum,
		content_hash, computed_fingerprint, fingerprint, source_endpoint, remote_addr, content_type, received_bytes)
		VALUES ($1, $2, $3, $4, $5, $6, $6, 'receive-message', '192.0.2.7', 'application/x-sap.idoc', $7) RETURNING id`,
		acme.ID, env.ID, mt.ID, docnum, hash[:], at.Fingerprint, xml).Scan(&id))

	svc := messageview.New(pool)
	m, err := svc.Get(ctx, auth.GlobalScope(), id)
	require.NoError(t, err)
	require.Empty(t, m.Key.Problem)
	require.False(t, m.Key.Changed, "the view rebuilt gives the fingerprint stored")
	var marked []string
	for _, s := range m.Payload.Segments {
		if s.Marked {
			marked = append(marked, s.Text)
		}
	}
	require.Equal(t, []string{`"4500012345"`}, marked)

	_, err = pool.Exec(ctx, `UPDATE messages SET received_bytes = '<ORDERS05/>' WHERE id = $1`, id)
	require.NoError(t, err)
	m, err = svc.Get(ctx, auth.GlobalScope(), id)
	require.NoError(t, err)
	require.Contains(t, m.Key.Problem, "cannot be rebuilt")
	require.Equal(t, "<ORDERS05/>", m.Received.Text)
}
