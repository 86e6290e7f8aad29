package delivery_test

import (
	"context"
	"fmt"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/lefia/edihub/internal/delivery"
	"github.com/lefia/edihub/internal/ingest"
	"github.com/lefia/edihub/internal/messagetype"
)

func TestEveryNewMessageGetsOneDeliveryPerMatchingDestination(t *testing.T) {
	t.Parallel()
	b := setup(t)
	all := b.destination(t, "production", "http://127.0.0.1:9/all")
	orders := b.destination(t, "production", "http://127.0.0.1:9/orders", "ORDERS05")
	sandbox := b.destination(t, "sandbox", "http://127.0.0.1:9/sandbox")
	deliveriesOf := func(messageID int64) int {
		return b.count(t, `SELECT count(*) FROM deliveries WHERE message_id = $1`, messageID)
	}

	order := b.receive(t, "production", "ORDERS05", "4700000325")
	require.Equal(t, ingest.Created, order.Outcome)
	require.Equal(t, 2, deliveriesOf(order.MessageID), "ORDERS05 goes to the destination for all types and the one for ORDERS05")

	invoice := b.receive(t, "production", "INVOIC02", "9000001")
	require.Equal(t, 1, deliveriesOf(invoice.MessageID), "INVOIC02 goes only to the destination for all types")

	inSandbox := b.receive(t, "sandbox", "ORDERS05", "4700000325")
	require.Equal(t, ingest.Created, inSandbox.Outcome)
	require.Equal(t, 1, deliveriesOf(inSandbox.MessageID), "another environment's destinations only")

	dup := b.receive(t, "production", "ORDERS05", "4700000325")
	require.Equal(t, ingest.DuplicateFingerprint, dup.Outcome)
	require.Equal(t, 4, b.count(t, `SELECT count(*) FROM deliveries`), "a duplicate creates no delivery")

	// A message without any fingerprint takes the other insert.
	mt := b.types["ORDERS05"]
	unkeyed, err := b.ingest.Receive(context.Background(), ingest.Request{
		TenantID: b.tenantID, EnvironmentID: b.envs["production"], MessageType: messagetype.Prepare(mt), Payload: []byte(`{"no":"key"}`),
		Source: ingest.Source{Endpoint: ingest.EndpointReceiveMessage, Actor: "test"},
	})
	require.NoError(t, err)
	require.Equal(t, ingest.Created, unkeyed.Outcome)
	require.Equal(t, 2, deliveriesOf(unkeyed.MessageID))

	// With an Idempotency-Key: the first request stores, the replay does not.
	keyed := ingest.Request{
		TenantID: b.tenantID, EnvironmentID: b.envs["production"], MessageType: messagetype.Prepare(mt), Docnum: "K-1",
		Payload: []byte(`{"id":"K-1"}`), IdempotencyKey: "key-1",
		Source: ingest.Source{Endpoint: ingest.EndpointReceiveMessage, Actor: "test"},
	}
	first, err := b.ingest.Receive(context.Background(), keyed)
	require.NoError(t, err)
	require.Equal(t, ingest.Created, first.Outcome)
	replay, err := b.ingest.Receive(context.Background(), keyed)
	require.NoError(t, err)
	require.Equal(t, ingest.ReplayedKey, replay.Outcome)
	require.Equal(t, 2, deliveriesOf(first.MessageID), "a replayed key creates no delivery")

	require.Equal(t, 8, b.count(t, `SELECT count(*) FROM deliveries`))
	requireOneJobPerDelivery(t, b)
	for _, id := range []int64{all, orders, sandbox} {
		require.Equal(t,
			b.count(t, `SELECT count(*) FROM deliveries WHERE destination_id = $1`, id),
			b.count(t, `SELECT count(*) FROM river_job WHERE queue = $1`, delivery.QueueName(id)),
			"each destination's jobs are on its own queue")
	}
}

// requireOneJobPerDelivery checks that deliveries and River jobs match one
// to one: no delivery without its job and no job without its delivery.
func requireOneJobPerDelivery(t *testing.T, b *testBundle) {
	t.Helper()
	require.Zero(t, b.count(t, `
		SELECT count(*) FROM deliveries d
		WHERE (SELECT count(*) FROM river_job j WHERE j.kind = 'delivery' AND (j.args->>'delivery_id')::bigint = d.id) <> 1`),
		"every delivery has exactly one job")
	require.Zero(t, b.count(t, `
		SELECT count(*) FROM river_job j
		WHERE j.kind = 'delivery' AND NOT EXISTS (SELECT FROM deliveries d WHERE d.id = (j.args->>'delivery_id')::bigint)`),
		"every job has its delivery")
}

func TestConcurrentIdenticalMessagesGetDeliveriesOnce(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.destination(t, "production", "http://127.0.0.1:9/a")
	b.destination(t, "production", "http://127.0.0.1:9/b")

	var wg sync.WaitGroup
	outcomes := make(chan ingest.Outcome, 20)
	for range 20 {
		wg.Go(func() { outcomes <- b.receive(t, "production", "ORDERS05", "4700000325").Outcome })
	}
	wg.Wait()
	close(outcomes)
	created := 0
	for o := range outcomes {
		if o == ingest.Created {
			created++
		}
	}
	require.Equal(t, 1, created)
	require.Equal(t, 1, b.count(t, `SELECT count(*) FROM messages`))
	require.Equal(t, 2, b.count(t, `SELECT count(*) FROM deliveries`))
	requireOneJobPerDelivery(t, b)
}

// Batches, packets and groups of single messages write their new
// messages' deliveries in the round trip that stores them
// (DeliveryCreateForStored): each new message gets one delivery per
// destination that takes it, a copy in the same request gets none, and a
// duplicate of a message stored before gets none either, even from a
// destination created after that message was stored.
func TestBatchesWriteDeliveriesWithTheirMessages(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.destination(t, "production", "http://127.0.0.1:9/all")
	b.destination(t, "production", "http://127.0.0.1:9/orders", "ORDERS05")
	earlier := b.receive(t, "production", "ORDERS05", "EARLIER")
	require.Equal(t, 2, b.count(t, `SELECT count(*) FROM deliveries WHERE message_id = $1`, earlier.MessageID))
	b.destination(t, "production", "http://127.0.0.1:9/late")

	item := func(code, id string) ingest.Request {
		return ingest.Request{
			TenantID: b.tenantID, EnvironmentID: b.envs["production"], MessageType: messagetype.Prepare(b.types[code]), Docnum: "D-" + id,
			Payload: []byte(`{"id":"` + id + `"}`), Source: ingest.Source{Endpoint: ingest.EndpointReceiveMessages, Actor: "test"},
		}
	}
	res, err := b.ingest.ReceiveBatch(context.Background(), ingest.Batch{Items: []ingest.Request{
		item("ORDERS05", "X"), item("ORDERS05", "X"), item("ORDERS05", "EARLIER"), item("INVOIC02", "Y"),
	}})
	require.NoError(t, err)
	outcomes := []ingest.Outcome{ingest.Created, ingest.DuplicateFingerprint, ingest.DuplicateFingerprint, ingest.Created}
	for i, want := range outcomes {
		require.Equal(t, want, res.Results[i].Outcome, "item %d", i)
	}
	deliveriesOf := func(r ingest.Result) int {
		return b.count(t, `SELECT count(*) FROM deliveries WHERE message_id = $1`, r.MessageID)
	}
	require.Equal(t, 3, deliveriesOf(res.Results[0]), "the new order: all, orders and late")
	require.Equal(t, 2, deliveriesOf(res.Results[2]), "the earlier order keeps its two; the late destination is not its")
	require.Equal(t, 2, deliveriesOf(res.Results[3]), "the new invoice: all and late")
	require.Equal(t, 7, b.count(t, `SELECT count(*) FROM deliveries`))
	requireOneJobPerDelivery(t, b)
}

// Single messages decided in groups, copies among them and in both
// environments, each get their destinations' deliveries once, with one job
// each.
func TestGroupsWriteDeliveriesOnce(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.destination(t, "production", "http://127.0.0.1:9/a")
	b.destination(t, "production", "http://127.0.0.1:9/b", "ORDERS05")
	b.destination(t, "sandbox", "http://127.0.0.1:9/sandbox")

	var wg sync.WaitGroup
	for i := range 80 {
		env := []string{"production", "sandbox"}[i%2]
		wg.Go(func() { b.receive(t, env, "ORDERS05", fmt.Sprintf("order-%d", i/4)) })
	}
	wg.Wait()
	require.Equal(t, 40, b.count(t, `SELECT count(*) FROM messages`), "20 orders in each environment")
	require.Equal(t, 20*2+20, b.count(t, `SELECT count(*) FROM deliveries`))
	requireOneJobPerDelivery(t, b)
}

func TestEnqueueTwiceCreatesNothingTheSecondTime(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.destination(t, "production", "http://127.0.0.1:9/a")
	msg := b.receive(t, "production", "ORDERS05", "1")
	tx, err := b.pool.Begin(context.Background())
	require.NoError(t, err)
	defer func() { _ = tx.Rollback(context.Background()) }()
	n, err := b.deliveries.EnqueueTx(context.Background(), tx, msg.MessageID)
	require.NoError(t, err)
	require.Zero(t, n)
}
