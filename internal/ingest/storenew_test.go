package ingest_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/lefia/edihub/internal/delivery"
	"github.com/lefia/edihub/internal/ingest"
	"github.com/lefia/edihub/internal/messagetype"
	"github.com/lefia/edihub/internal/testfactory"
)

// Messages that look new (the service never saw their bytes, and no two
// share a fingerprint) are offered to the statement that only stores; the
// ones it finds taken are decided after it in the same transaction as any
// other message is: a retransmission the service forgot is blocked as an
// identical duplicate, a changed copy is blocked and kept, and a holder
// past its window gives its claim up to the new copy. Every message stored
// on either path gets a delivery to each destination of its type, each with
// its job.
func TestNewMessagesLeaveTakenOnesToTheFullDecision(t *testing.T) {
	t.Parallel()
	s := newBatchSite(t)
	testfactory.Destination(t, s.pool, testfactory.DestinationOpts{URL: "http://127.0.0.1:9/orders"})
	testfactory.Destination(t, s.pool, testfactory.DestinationOpts{URL: "http://127.0.0.1:9/archive"})
	testfactory.MessageType(t, s.pool, &testfactory.MessageTypeOpts{Code: "INVOIC02"})
	testfactory.Destination(t, s.pool, testfactory.DestinationOpts{URL: "http://127.0.0.1:9/invoices", MessageTypes: []string{"INVOIC02"}})
	before := s.batch(t, `{"id": "S"}`, `{"id": "C", "v": 1}`, `{"id": "E"}`)
	retransmitted, changed, expired := before[0].MessageID, before[1].MessageID, before[2].MessageID
	_, err := s.pool.Exec(context.Background(), `UPDATE messages SET received_at = now() - interval '25 hours' WHERE id = $1`, expired)
	require.NoError(t, err)

	// A service started since (a restart, another replica) has seen none of
	// these bytes.
	restarted := ingest.New(s.pool, time.Hour, delivery.NewService(s.pool, 3))
	items := []ingest.Request{s.req(`{"id": "N"}`), s.req(`{"id": "S"}`), s.req(`{"id": "E"}`), s.req(`{"id": "C", "v": 2}`), s.req(`{"id": "M"}`)}
	res, err := restarted.ReceiveBatch(context.Background(), ingest.Batch{Items: items})
	require.NoError(t, err)
	outcomes := make([]ingest.Outcome, len(res.Results))
	for i, r := range res.Results {
		outcomes[i] = r.Outcome
	}
	require.Equal(t, []ingest.Outcome{ingest.Created, ingest.DuplicateFingerprint, ingest.Created,
		ingest.DuplicateFingerprint, ingest.Created}, outcomes)
	require.Equal(t, retransmitted, res.Results[1].MessageID)
	require.NotEqual(t, expired, res.Results[2].MessageID, "the expired holder does not block")
	require.Equal(t, changed, res.Results[3].MessageID)

	require.Equal(t, 6, s.count(t, `SELECT count(*) FROM messages`))
	require.Equal(t, 6, s.count(t, `SELECT count(*) FROM message_key_values`))
	require.Equal(t, 5, s.count(t, `SELECT count(*) FROM messages WHERE fingerprint IS NOT NULL`), "the expired holder released its claim")
	require.Equal(t, 2, s.count(t, `SELECT count(*) FROM audit_events WHERE action = 'message.duplicate_blocked'`))
	require.Equal(t, 1, s.count(t, `SELECT count(*) FROM audit_events WHERE details->>'content' = 'identical'`))
	require.Equal(t, 1, s.count(t, `SELECT count(*) FROM blocked_copies WHERE payload->>'v' = '2' AND key_values = '{C}'`),
		"the changed copy is kept with its key values")
	require.Equal(t, 12, s.count(t, `SELECT count(*) FROM deliveries`),
		"one delivery for each stored message to each destination of its type")
	require.Zero(t, s.count(t, `SELECT count(*) FROM deliveries d JOIN destinations t ON t.id = d.destination_id WHERE t.url LIKE '%/invoices'`))
	require.Equal(t, 12, s.count(t, `SELECT count(*) FROM deliveries d JOIN river_job j ON (j.args->>'delivery_id')::bigint = d.id`),
		"each with one job")
}

// New messages are numbered in the order they were sent, and each keeps
// its own key values, however many a batch holds: the statement that
// stores them reads its arrays in step.
func TestNewMessagesAreNumberedInTheirOrder(t *testing.T) {
	t.Parallel()
	s := newBatchSite(t)
	two := testfactory.MessageType(t, s.pool, &testfactory.MessageTypeOpts{Code: "TWOKEYS", Fields: []string{"id", "ref"}})
	var items []ingest.Request
	for i := range 60 {
		req := s.req(fmt.Sprintf(`{"id": "N%02d", "ref": "R%02d"}`, i, i))
		req.MessageType = messagetype.Prepare(two)
		items = append(items, req)
	}
	res, err := s.in.ReceiveBatch(context.Background(), ingest.Batch{Items: items})
	require.NoError(t, err)
	for i, r := range res.Results {
		require.Equal(t, ingest.Created, r.Outcome)
		if i > 0 {
			require.Greater(t, r.MessageID, res.Results[i-1].MessageID, "message %d is numbered after the one before it", i)
		}
		var id, ref string
		require.NoError(t, s.pool.QueryRow(context.Background(), `SELECT m.payload->>'id', k.value
			FROM messages m JOIN message_keys k ON k.message_id = m.id WHERE m.id = $1`, r.MessageID).Scan(&id, &ref))
		require.Equal(t, fmt.Sprintf("N%02d", i), id)
		require.Equal(t, fmt.Sprintf("R%02d", i), ref, "the key beyond the first goes with its own message")
	}
}
