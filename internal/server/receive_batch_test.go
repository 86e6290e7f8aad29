package server_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/lefia/edihub/internal/config"
	"github.com/lefia/edihub/internal/pgtest"
)

// postBatch sends a batch to receive-messages.
func (b *testBundle) postBatch(t *testing.T, body []byte, headers ...string) response {
	t.Helper()
	return b.postTo(t, "/api/edi-hub/receive-messages", body, headers...)
}

// batchOf makes a batch body of envelopes, each with the idempotency_key
// given for it ("" for none).
func batchOf(t *testing.T, envelopes [][]byte, keys ...string) []byte {
	t.Helper()
	items := make([]map[string]any, len(envelopes))
	for i, env := range envelopes {
		require.NoError(t, json.Unmarshal(env, &items[i]))
		if i < len(keys) && keys[i] != "" {
			items[i]["idempotency_key"] = keys[i]
		}
	}
	body, err := json.Marshal(map[string]any{"messages": items})
	require.NoError(t, err)
	return body
}

func TestBatch(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.messageType(t, "ORDERS05", []string{"*.IDOC.E1EDK01.BELNR"}, nil)
	b.messageType(t, "INVOIC02", nil, nil)
	body := batchOf(t, [][]byte{
		envelopeFor(t, "ORDERS05", "orders05.json"),
		envelopeFor(t, "INVOIC02", "invoic02.json"),
		envelopeFor(t, "ORDERS05", "orders05_repeat_output_new_docnum.json"), // same BELNR as the first
	})
	results := packetResults(t, b.postBatch(t, body))
	require.Len(t, results, 3)
	require.Equal(t, "accepted", results[0]["status"])
	require.Equal(t, "ORDERS05", results[0]["message_type"])
	require.Equal(t, "accepted", results[1]["status"])
	require.Equal(t, "INVOIC02", results[1]["message_type"])
	require.Equal(t, true, results[2]["duplicate"])
	require.Equal(t, results[0]["id"], results[2]["duplicate_of"])
	// Each receipt names the item it answers: the retransmission's own
	// docnum beside its original's.
	for i, r := range results {
		require.EqualValues(t, i+1, r["item"].(map[string]any)["position"])
	}
	require.Equal(t, results[0]["docnum"], results[0]["item"].(map[string]any)["docnum"])
	require.NotEqual(t, results[2]["docnum"], results[2]["item"].(map[string]any)["docnum"],
		"a retransmission under a new DOCNUM is told apart from its original")
	require.Equal(t, results[0]["docnum"], results[2]["docnum"], "the receipt names the original")
	require.Equal(t, 2, b.messages(t))
	require.Equal(t, 2, b.count(t, `SELECT count(*) FROM messages WHERE source_endpoint = 'receive-messages'`))
	require.Equal(t, 1, b.count(t, `SELECT count(*) FROM audit_events
		WHERE details->'source'->>'endpoint' = 'receive-messages' AND (details->'source'->>'position')::int = 3`))

	// Sent again, every item is a duplicate.
	for _, r := range packetResults(t, b.postBatch(t, body)) {
		require.Equal(t, true, r["duplicate"])
	}
	require.Equal(t, 2, b.messages(t))
}

func TestBatchItemIdempotencyKeys(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.messageType(t, "ORDERS05", []string{"*.IDOC.E1EDK01.BELNR"}, nil)
	orders := envelopeFor(t, "ORDERS05", "orders05.json")
	changed := envelopeFor(t, "ORDERS05", "orders05_changed_content_same_belnr.json")

	// Keyed items are not fingerprinted against each other.
	results := packetResults(t, b.postBatch(t, batchOf(t, [][]byte{orders, changed}, "k-1", "k-2")))
	require.Equal(t, "accepted", results[0]["status"])
	require.Equal(t, "accepted", results[1]["status"])
	require.Equal(t, 2, b.messages(t))

	// A key repeated in a later batch replays; an unkeyed item still
	// claims its fingerprint.
	results = packetResults(t, b.postBatch(t, batchOf(t, [][]byte{changed, orders}, "k-2", "")))
	require.Equal(t, "accepted", results[0]["status"], "the replay is the first answer, byte for byte")
	require.Equal(t, float64(2), results[0]["id"])
	require.Equal(t, "accepted", results[1]["status"], "keyed messages hold no fingerprint")
	require.Equal(t, 3, b.messages(t))

	// A key reused for other content refuses the whole batch.
	r := b.postBatch(t, batchOf(t, [][]byte{envelopeFor(t, "ORDERS05", "orders05_resent_same_docnum.json"), orders}, "", "k-2"))
	p := requireProblem(t, r, http.StatusUnprocessableEntity, "idempotency-key-reused")
	require.Equal(t, "k-2", p["idempotency_key"])
	require.Equal(t, false, p["retryable"])
	require.Equal(t, 3, b.messages(t))
}

func TestBatchRequestIdempotencyKey(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.messageType(t, "ORDERS05", nil, nil)
	body := batchOf(t, [][]byte{envelopeFor(t, "ORDERS05", "orders05.json"), envelopeFor(t, "ORDERS05", "orders05_repeat_output_new_docnum.json")})
	first := b.postBatch(t, body, "Idempotency-Key", "batch-7")
	require.Len(t, packetResults(t, first), 2)
	replay := b.postBatch(t, body, "Idempotency-Key", "batch-7")
	require.Equal(t, http.StatusOK, replay.status)
	require.Equal(t, "true", replay.header.Get("Idempotent-Replayed"))
	require.Equal(t, first.body, replay.body)
	require.Equal(t, 2, b.messages(t))
	firstResults := packetResults(t, first)
	require.Equal(t, []blockedEvent{
		{Position: 1, Mode: "idempotency_key", OriginalID: int64(firstResults[0]["id"].(float64)), Content: "identical"},
		{Position: 2, Mode: "idempotency_key", OriginalID: int64(firstResults[1]["id"].(float64)), Content: "identical"},
	}, b.blockedIn(t, replay), "one event per item")

	// The header and an item's key at once are refused.
	r := b.postBatch(t, batchOf(t, [][]byte{envelopeFor(t, "ORDERS05", "orders05.json")}, "item-key"), "Idempotency-Key", "batch-8")
	requireProblem(t, r, http.StatusBadRequest, "invalid-batch")
	require.Equal(t, 2, b.messages(t))
}

// An invalid item refuses the batch, and the problem lists every one.
func TestBatchAllOrNothing(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.messageType(t, "ORDERS05", nil, nil)
	body := []byte(`{"messages": [
		{"message_type": "ORDERS05", "payload": {"a": 1}, "docnum": "1"},
		{"payload": {"a": 2}},
		{"message_type": "ORDERS05", "payload": {"a": 3}, "docnum": "3"},
		{"message_type": "DESADV01", "payload": {"a": 4}},
		{"message_type": "ORDERS05", "payload": {"a": 5, "a": 6}},
		{"message_type": "ORDERS05", "payload": {}, "idempotency_key": "bad\u0001key"},
		[1, 2],
		{"message_type": "ORDERS05", "payload": {}, "idempotency_key": 7},
		{"message_type": "ORDERS05", "payload": {"a": 8}, "docnum": "8", "idempotency_key": null}
	]}`)
	r := b.postBatch(t, body)
	require.Equal(t, http.StatusBadRequest, r.status, "%s", r.body)
	var p struct {
		Type   string
		Errors []struct {
			Index          int
			Type           string
			IdempotencyKey string `json:"idempotency_key"`
		}
	}
	require.NoError(t, json.Unmarshal(r.body, &p))
	require.Equal(t, "invalid-batch", p.Type)
	var got []string
	for _, e := range p.Errors {
		got = append(got, fmt.Sprintf("%d:%s:%s", e.Index, e.Type, e.IdempotencyKey))
	}
	require.Equal(t, []string{"1:missing-field:", "3:unknown-message-type:", "4:invalid-payload:",
		"5:invalid-idempotency-key:bad\x01key", "6:malformed-json:", "7:invalid-idempotency-key:"}, got,
		"an item's key is named when it is a string, the one that was refused")
	require.Equal(t, 0, b.messages(t))
}

func TestBatchSize(t *testing.T) {
	t.Parallel()
	cfg, err := config.Load(func(name string) string {
		if name == "MAX_BATCH_MESSAGES" {
			return "3"
		}
		return ""
	})
	require.NoError(t, err)
	b := setupWith(t, pgtest.Pool(t), cfg)
	b.messageType(t, "ORDERS05", nil, nil)
	item := func(n int) string {
		return fmt.Sprintf(`{"message_type": "ORDERS05", "docnum": "%d", "payload": {}}`, n)
	}
	for _, body := range []string{`{"messages": []}`, `{"messages": {}}`, `{}`, `[]`,
		`{"messages": [` + strings.Join([]string{item(1), item(2), item(3), item(4)}, ",") + `]}`} {
		r := b.postBatch(t, []byte(body))
		require.Equal(t, http.StatusBadRequest, r.status, body)
	}
	results := packetResults(t, b.postBatch(t, []byte(`{"messages": [`+strings.Join([]string{item(1), item(2), item(3)}, ",")+`]}`)))
	require.Len(t, results, 3)
	require.Equal(t, 3, b.messages(t))

	r := b.postBatch(t, []byte(`<xml/>`), "Content-Type", "application/xml")
	require.Equal(t, http.StatusUnsupportedMediaType, r.status)
}

// Every message a packet or a batch stores is owed to its destinations,
// written in the request's transaction; its duplicates are owed nothing.
func TestBatchAndPacketDeliveries(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.messageType(t, "ORDERS05", []string{"*.IDOC.E1EDK01.BELNR"}, nil)
	b.messageType(t, "INVOIC02", nil, nil)
	all := b.destination(t, "http://127.0.0.1:9/all")
	invoices := b.destination(t, "http://127.0.0.1:9/invoices", "INVOIC02")

	packet := packetResults(t, b.postXML(t, readFile(t, "orders05_packet.xml"), "application/xml", "")) // one order, two repeats
	batch := packetResults(t, b.postBatch(t, batchOf(t, [][]byte{
		envelopeFor(t, "INVOIC02", "invoic02.json"), envelopeFor(t, "ORDERS05", "orders05.json"), // a new invoice, the order again
	})))
	require.Equal(t, 2, b.messages(t))
	owed := func(message any, destination int64) int {
		return b.count(t, `SELECT count(*) FROM deliveries WHERE message_id = $1 AND destination_id = $2`, int64(message.(float64)), destination)
	}
	require.Equal(t, 1, owed(packet[0]["id"], all))
	require.Equal(t, 0, owed(packet[0]["id"], invoices))
	require.Equal(t, 1, owed(batch[0]["id"], all))
	require.Equal(t, 1, owed(batch[0]["id"], invoices))
	require.Equal(t, 3, b.count(t, `SELECT count(*) FROM deliveries`), "duplicates are owed nothing")
	require.Equal(t, 3, b.count(t, `SELECT count(*) FROM river_job`), "one job per delivery")
}
