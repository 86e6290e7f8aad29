package server_test

import (
	"fmt"
	"net/http"
	"net/url"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/lefia/edihub/internal/auth"
	"github.com/lefia/edihub/internal/pgtest"
)

// keyValuesOf returns the business key values kept for message id.
func (b *testBundle) keyValuesOf(t *testing.T, id any) []string {
	t.Helper()
	return pgtest.Column[string](t, b.pool, `SELECT value FROM message_keys WHERE message_id = $1 ORDER BY value`, id)
}

// Every way a message is stored keeps the values its fingerprint was made
// of, once each, for the admin's search: by fingerprint, under an
// Idempotency-Key, in a batch under the request's key, and when an admin
// releases a blocked copy. A blocked duplicate stores none; a value that
// is missing is not kept.
func TestStoredMessagesKeepTheirKeyValues(t *testing.T) {
	t.Parallel()
	b := setup(t)
	// The BELNR twice (two paths to it), and a path with no value.
	b.messageType(t, "ORDERS05", []string{"*.IDOC.E1EDK01.BELNR", "ORDERS05.IDOC.E1EDK01.BELNR", "*.IDOC.E1EDK01.NOTHING"}, nil)
	belnr := []string{"4500012345"}

	first := b.post(t, rawEnvelope(t, "ORDERS05", "orders05.json"))
	require.Equal(t, http.StatusCreated, first.status, "%s", first.body)
	require.Equal(t, belnr, b.keyValuesOf(t, first.json(t)["id"]))

	keyed := b.post(t, rawEnvelope(t, "ORDERS05", "orders05_repeat_output_new_docnum.json"), "Idempotency-Key", "order-1")
	require.Equal(t, http.StatusCreated, keyed.status, "%s", keyed.body)
	require.Equal(t, belnr, b.keyValuesOf(t, keyed.json(t)["id"]))

	batch := packetResults(t, b.postBatch(t, batchOf(t, [][]byte{
		envelopeFor(t, "ORDERS05", "orders05.json"),
		envelopeFor(t, "ORDERS05", "orders05_e1edk02_as_array.json"),
	}), "Idempotency-Key", "batch-1"))
	for _, item := range batch {
		require.Equal(t, belnr, b.keyValuesOf(t, item["id"]))
	}

	// A changed copy is blocked, keeps its values and gives them to the
	// message it is released as.
	changed := b.post(t, rawEnvelope(t, "ORDERS05", "orders05_changed_content_same_belnr.json"))
	require.Equal(t, http.StatusOK, changed.status, "%s", changed.body)
	require.Equal(t, 4, b.count(t, `SELECT count(*) FROM message_keys`), "the duplicate keeps none")
	var copyID int64
	require.NoError(t, b.pool.QueryRow(t.Context(), `SELECT id FROM blocked_copies`).Scan(&copyID))
	c := b.client(t)
	c.login(b.user(t, "admin@acme.example", auth.RoleAdmin, ""))
	c.get(fmt.Sprintf("/admin/blocked/%d", copyID))
	resp := c.submit(fmt.Sprintf("/admin/blocked/%d/release", copyID), url.Values{"reason": {"corrected order"}})
	require.Equal(t, http.StatusSeeOther, resp.status, "%s", resp.body)
	var released int64
	require.NoError(t, b.pool.QueryRow(t.Context(), `SELECT released_message_id FROM blocked_copies`).Scan(&released))
	require.Equal(t, belnr, b.keyValuesOf(t, released))
}
