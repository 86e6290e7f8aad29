package ingest_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/lefia/edihub/internal/delivery"
	"github.com/lefia/edihub/internal/edi"
	"github.com/lefia/edihub/internal/ingest"
	"github.com/lefia/edihub/internal/loadgen"
	"github.com/lefia/edihub/internal/messagetype"
	"github.com/lefia/edihub/internal/pgtest"
	"github.com/lefia/edihub/internal/testfactory"
)

// Every way of storing a message makes the round trips docs/performance.md
// ("Round trips of a stored message") promises: the transaction's BEGIN,
// the claim locks, the decision and the deliveries travel together, and
// only COMMIT goes on its own. An environment without destinations has no
// River job to insert.
func TestStoringMakesItsRoundTrips(t *testing.T) {
	t.Parallel()
	pool, sends := pgtest.CountedPool(t, 4)
	tenant, env := testfactory.TenantWithEnvironment(t, pool, "acme")
	mt := testfactory.MessageType(t, pool, &testfactory.MessageTypeOpts{Fields: []string{"id"}})
	in := ingest.New(pool, time.Hour, delivery.NewService(pool, 3))
	ctx := context.Background()
	req := func(id, key string) ingest.Request {
		return ingest.Request{
			TenantID: tenant.ID, EnvironmentID: env.ID, MessageType: messagetype.Prepare(mt), Payload: []byte(`{"id":"` + id + `"}`),
			IdempotencyKey: key, Source: ingest.Source{Endpoint: ingest.EndpointReceiveMessage, Actor: "test"},
		}
	}
	roundTrips := func(store func() error) int64 {
		t.Helper()
		before := sends.Count()
		require.NoError(t, store())
		return sends.Count() - before
	}
	receive := func(r ingest.Request, want ingest.Outcome) func() error {
		return func() error {
			res, err := in.Receive(ctx, r)
			if err == nil && res.Outcome != want {
				return fmt.Errorf("outcome %s, want %s", res.Outcome, want)
			}
			return err
		}
	}

	require.EqualValues(t, 2, roundTrips(receive(req("A", ""), ingest.Created)),
		"a new message: [BEGIN, storing, deliveries], COMMIT")
	require.EqualValues(t, 1, roundTrips(receive(req("A", ""), ingest.DuplicateFingerprint)),
		"a retransmission: one statement")
	byDocnum := testfactory.MessageType(t, pool, &testfactory.MessageTypeOpts{Code: "DOCNUM01"})
	sameBytes := req("A", "")
	sameBytes.MessageType, sameBytes.Docnum = messagetype.Prepare(byDocnum), "1"
	require.EqualValues(t, 2, roundTrips(receive(sameBytes, ingest.Created)),
		"the same bytes as a new message of a type keyed by docnum: the same two")
	sameBytes.Docnum = "2"
	require.EqualValues(t, 2, roundTrips(receive(sameBytes, ingest.Created)),
		"the same bytes under another docnum: the same two, not taken for a retransmission")
	require.EqualValues(t, 4, roundTrips(receive(req("B", "key-1"), ingest.Created)),
		"a key's first use: its replay, [BEGIN, claim], [deliveries, completion], COMMIT")
	require.EqualValues(t, 1, roundTrips(receive(req("B", "key-1"), ingest.ReplayedKey)),
		"a replay: one statement")
	batch := ingest.Batch{}
	for i := range 10 {
		batch.Items = append(batch.Items, req(fmt.Sprintf("batch-%d", i%7), ""))
	}
	require.EqualValues(t, 2, roundTrips(func() error { _, err := in.ReceiveBatch(ctx, batch); return err }),
		"a batch: [BEGIN, claim locks, decision, deliveries], COMMIT")
	require.EqualValues(t, 1, roundTrips(func() error { _, err := in.ReceiveBatch(ctx, batch); return err }),
		"the batch sent again, every message a retransmission: one statement")
	fresh := ingest.Batch{Items: []ingest.Request{req("fresh-1", ""), req("fresh-2", "")}}
	require.EqualValues(t, 2, roundTrips(func() error { _, err := in.ReceiveBatch(ctx, fresh); return err }),
		"a batch of new messages: [BEGIN, claim locks, storing, deliveries], COMMIT")
	changed := req("A", "")
	changed.Payload = []byte(`{"id":"A","changed":true}`)
	fresh = ingest.Batch{Items: []ingest.Request{req("fresh-3", ""), changed}}
	require.EqualValues(t, 3, roundTrips(func() error { _, err := in.ReceiveBatch(ctx, fresh); return err }),
		"one of them a changed copy: [BEGIN, claim locks, storing, deliveries], [decision of the copy, deliveries], COMMIT")
	changed.Payload = []byte(`{"id":"A","changed":2}`)
	require.EqualValues(t, 3, roundTrips(receive(changed, ingest.DuplicateFingerprint)),
		"a changed copy alone: [BEGIN, storing, deliveries], [decision, deliveries], COMMIT")

	orders := messagetype.Prepare(testfactory.MessageType(t, pool, &testfactory.MessageTypeOpts{Code: "850", Fields: []string{"BEG.0.BEG03"}}))
	interchange := func(control uint64) func() error {
		ic, err := edi.Parse(loadgen.Interchange(loadgen.FormX12, 3, 256, 3*control, control), edi.DefaultLimits)
		require.NoError(t, err)
		b := ingest.Batch{Interchange: &ingest.Interchange{Standard: ic.Standard, Sender: ic.Sender, Receiver: ic.Receiver,
			ControlNumber: ic.ControlNumber, ContentHash: ic.ContentHash, Window: time.Hour}}
		for _, m := range ic.Messages {
			b.Items = append(b.Items, ingest.Request{TenantID: tenant.ID, EnvironmentID: env.ID, MessageType: orders,
				Docnum: m.Docnum, Payload: m.View, CanonicalPayload: m.Canonical, ShapeIsContent: true,
				Source:   ingest.Source{Endpoint: ingest.EndpointReceiveMessage, Actor: "test"},
				Received: &ingest.Received{ContentType: "application/edi-x12", Bytes: m.Bytes, Frame: m.Frame}})
		}
		return func() error {
			res, err := in.ReceiveBatch(ctx, b)
			if err == nil && res.Interchange.Duplicate {
				return fmt.Errorf("interchange %d is a duplicate", control)
			}
			return err
		}
	}
	require.EqualValues(t, 6, roundTrips(interchange(1)),
		"a pair's first interchange: [BEGIN, its claim], [claim locks, storing], [answer kept, partner's sequence], "+
			"the pair's lock, its creation, COMMIT")
	require.EqualValues(t, 4, roundTrips(interchange(2)),
		"its next: [BEGIN, its claim], [claim locks, storing], [answer kept, partner's sequence], COMMIT")
}
