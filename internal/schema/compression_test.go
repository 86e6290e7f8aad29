package schema_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/lefia/edihub/internal/delivery"
	"github.com/lefia/edihub/internal/ingest"
	"github.com/lefia/edihub/internal/messagetype"
	"github.com/lefia/edihub/internal/pgtest"
	"github.com/lefia/edihub/internal/testfactory"
)

// Payloads large enough to be compressed, and an interchange's answer and
// acknowledgment, are compressed with lz4, which
// costs PostgreSQL a fraction of pglz's CPU (docs/performance.md,
// "Compression of payloads"), on every server built with it, as Debian's
// and the test server are.
func TestStoredPayloadsAreCompressedWithLZ4(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool := pgtest.Pool(t)
	var supported bool
	require.NoError(t, pool.QueryRow(ctx,
		`SELECT 'lz4' = ANY (enumvals) FROM pg_settings WHERE name = 'default_toast_compression'`).Scan(&supported))
	require.True(t, supported, "the test server is built with lz4")

	tenant, env := testfactory.TenantWithEnvironment(t, pool, "acme")
	mt := testfactory.MessageType(t, pool, &testfactory.MessageTypeOpts{Fields: []string{"id"}})
	in := ingest.New(pool, time.Hour, delivery.NewService(pool, 3))
	payload := `{"id":"A","items":[` + strings.Repeat(`{"MATNR":"000000000000012345","MENGE":"1.000"},`, 200) + `{}]}`
	res, err := in.Receive(ctx, ingest.Request{
		TenantID: tenant.ID, EnvironmentID: env.ID, MessageType: messagetype.Prepare(mt), Payload: []byte(payload),
		Source: ingest.Source{Endpoint: ingest.EndpointReceiveMessage, Actor: "test"},
	})
	require.NoError(t, err)
	require.Equal(t, ingest.Created, res.Outcome)

	var method string
	var stored, length int
	require.NoError(t, pool.QueryRow(ctx,
		`SELECT pg_column_compression(payload), pg_column_size(payload), octet_length(payload::text) FROM messages WHERE id = $1`,
		res.MessageID).Scan(&method, &stored, &length))
	require.Equal(t, "lz4", method)
	require.Less(t, stored, length/4, "the payload is stored compressed")

	rows, err := pool.Query(ctx, `SELECT attrelid::regclass::text || '.' || attname FROM pg_attribute
		WHERE (attrelid IN ('messages'::regclass, 'blocked_copies'::regclass) AND attname IN ('payload', 'received_bytes')
		    OR attrelid = 'interchanges'::regclass AND attname IN ('response_body', 'acknowledgment'))
		  AND attcompression = 'l' ORDER BY 1`)
	require.NoError(t, err)
	var columns []string
	for rows.Next() {
		var c string
		require.NoError(t, rows.Scan(&c))
		columns = append(columns, c)
	}
	require.NoError(t, rows.Err())
	require.Equal(t, []string{"blocked_copies.payload", "blocked_copies.received_bytes",
		"interchanges.acknowledgment", "interchanges.response_body",
		"messages.payload", "messages.received_bytes"}, columns)
}
