package server_test

import (
	"bytes"
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
	return pgtest.Column[string](t, b.pool, `SELECT value FROM message_key_values WHERE message_id = $1 ORDER BY value`, id)
}

// releaseTheBlockedCopy has an admin release the one blocked copy there is,
// and returns the id of the message it was released as.
func (b *testBundle) releaseTheBlockedCopy(t *testing.T) int64 {
	t.Helper()
	var copyID int64
	require.NoError(t, b.pool.QueryRow(t.Context(), `SELECT id FROM blocked_copies`).Scan(&copyID))
	c := b.client(t)
	c.login(b.user(t, "admin@acme.example", auth.RoleAdmin, ""))
	c.get(fmt.Sprintf("/admin/blocked/%d", copyID))
	resp := c.submit(fmt.Sprintf("/admin/blocked/%d/release", copyID), url.Values{"reason": {"corrected order"}})
	require.Equal(t, http.StatusSeeOther, resp.status, "%s", resp.body)
	var released int64
	require.NoError(t, b.pool.QueryRow(t.Context(), `SELECT released_message_id FROM blocked_copies`).Scan(&released))
	return released
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
	require.Equal(t, 4, b.count(t, `SELECT count(*) FROM message_key_values`), "the duplicate keeps none")
	require.Equal(t, belnr, b.keyValuesOf(t, b.releaseTheBlockedCopy(t)))
}

// A message's first business key value is kept in its row and the others
// in message_keys (migration 039), by every statement that stores a
// message: alone, under an Idempotency-Key, in a batch of new messages
// (MessageStoreNew) and in one with a repeat (MessageStoreOrBlockAll),
// under a batch's key, and when a blocked copy is released.
func TestTheFirstKeyValueIsKeptInTheMessagesRow(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.messageType(t, "ORDERS05", []string{"*.IDOC.EDI_DC40.DOCNUM", "*.IDOC.E1EDK01.BELNR"}, nil)
	split := func(id any) (first string, others []string) {
		t.Helper()
		require.NoError(t, b.pool.QueryRow(t.Context(), `SELECT first_key_value FROM messages WHERE id = $1`, id).Scan(&first))
		return first, pgtest.Column[string](t, b.pool, `SELECT value FROM message_keys WHERE message_id = $1`, id)
	}
	requireSplit := func(id any, docnum string) {
		t.Helper()
		first, others := split(id)
		require.Equal(t, docnum, first)
		require.Equal(t, []string{"4500012345"}, others)
	}

	alone := b.post(t, rawEnvelope(t, "ORDERS05", "orders05.json"))
	require.Equal(t, http.StatusCreated, alone.status, "%s", alone.body)
	requireSplit(alone.json(t)["id"], "0000000000900101")

	keyed := b.post(t, rawEnvelope(t, "ORDERS05", "orders05_repeat_output_new_docnum.json"), "Idempotency-Key", "order-1")
	require.Equal(t, http.StatusCreated, keyed.status, "%s", keyed.body)
	requireSplit(keyed.json(t)["id"], "0000000000900177")

	repeated := packetResults(t, b.postBatch(t, batchOf(t, [][]byte{
		envelopeFor(t, "ORDERS05", "orders05_changed_content_same_belnr.json"),
		envelopeFor(t, "ORDERS05", "orders05_changed_content_same_belnr.json"),
	})))
	require.Equal(t, "accepted", repeated[0]["status"])
	require.Equal(t, "duplicate", repeated[1]["status"])
	requireSplit(repeated[0]["id"], "0000000000900178")

	// A new order beside a changed copy of the first one, which is blocked
	// and kept for review.
	changed := bytes.Replace(envelopeFor(t, "ORDERS05", "orders05.json"), []byte(`"CURCY":"BRL"`), []byte(`"CURCY":"EUR"`), 1)
	require.NotEqual(t, envelopeFor(t, "ORDERS05", "orders05.json"), changed)
	fresh := packetResults(t, b.postBatch(t, batchOf(t, [][]byte{envelopeFor(t, "ORDERS05", "invoic02.json"), changed})))
	require.Equal(t, "accepted", fresh[0]["status"])
	require.Equal(t, "duplicate", fresh[1]["status"])
	first, others := split(fresh[0]["id"])
	require.Equal(t, "0000000000700042", first)
	require.Equal(t, []string{"9000004711"}, others)

	underKey := packetResults(t, b.postBatch(t, batchOf(t, [][]byte{
		envelopeFor(t, "ORDERS05", "orders05_changed_content_same_belnr.json"),
		envelopeFor(t, "ORDERS05", "orders05.json"),
	}), "Idempotency-Key", "batch-1"))
	for _, item := range underKey {
		_, others := split(item["id"])
		require.Equal(t, []string{"4500012345"}, others)
	}

	requireSplit(b.releaseTheBlockedCopy(t), "0000000000900101")
}
