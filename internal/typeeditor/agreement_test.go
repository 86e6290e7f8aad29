package typeeditor

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/lefia/edihub/internal/delivery"
	"github.com/lefia/edihub/internal/ingest"
	"github.com/lefia/edihub/internal/messagetype"
	"github.com/lefia/edihub/internal/pgtest"
	"github.com/lefia/edihub/internal/testfactory"
)

// The window rule is written twice: in SQL, where ingest decides
// (MessageStoreOrBlock, judged by the database clock), and in Go, where the
// editor's impact analysis replays stored messages. This test feeds one
// stream of messages to both and requires the same decision for each, so
// that the two cannot drift apart unnoticed.
func TestReplayAgreesWithIngest(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool := pgtest.Pool(t)
	_, production := testfactory.TenantWithEnvironment(t, pool, "acme")
	sandbox := testfactory.Environment(t, pool, &testfactory.EnvironmentOpts{Slug: "sandbox"})
	window := 24
	paths := []string{"IDOC.E1EDK01.BELNR"}
	mt := testfactory.MessageType(t, pool, &testfactory.MessageTypeOpts{Fields: paths, WindowHours: &window})

	type arrival struct {
		env     int64
		belnr   string
		docnum  string
		at      time.Duration // since the first message
		key     string        // an Idempotency-Key, which replaces the fingerprint check
		blocked bool          // the decision both sides must reach
	}
	h := time.Hour
	stream := []arrival{
		{env: production.ID, belnr: "A", docnum: "1", at: 0},
		{env: production.ID, belnr: "A", docnum: "2", at: 1 * h, blocked: true},
		{env: sandbox.ID, belnr: "A", docnum: "3", at: 2 * h},
		{env: production.ID, belnr: "B", docnum: "4", at: 3 * h},
		// A second before the window of the first ends it still blocks.
		{env: production.ID, belnr: "A", docnum: "5", at: 24*h - time.Second, blocked: true},
		// Exactly the window after the first it no longer blocks, and takes
		// the fingerprint over...
		{env: production.ID, belnr: "A", docnum: "6", at: 24 * h},
		// ...so that it, not the first, blocks the next repeat.
		{env: production.ID, belnr: "A", docnum: "7", at: 25 * h, blocked: true},
		// A keyed message neither blocks nor is blocked by fingerprint.
		{env: production.ID, belnr: "A", docnum: "8", at: 26 * h, key: "k-1"},
		{env: production.ID, belnr: "B", docnum: "9", at: 26*h + time.Minute, blocked: true},
		// No order number: the docnum is the key, and it is new.
		{env: production.ID, docnum: "10", at: 27 * h},
		{env: production.ID, docnum: "10", at: 28 * h, blocked: true},
		// The sandbox holder, 47 hours old, is long out of the window.
		{env: sandbox.ID, belnr: "A", docnum: "11", at: 49 * h},
	}

	in := ingest.New(pool, time.Hour, delivery.NewService(pool, 3))
	r := newReplay(mt.ID, paths, int32(window))
	stored := map[int64]time.Duration{} // message id → arrival in the stream
	for i, a := range stream {
		payload := []byte(`{}`)
		if a.belnr != "" {
			payload = fmt.Appendf(nil, `{"IDOC":{"E1EDK01":{"BELNR":%q}}}`, a.belnr)
		}

		// Ingest judges the window by the database clock, so the stored
		// messages are moved back in time to the ages they would have when
		// this one arrives.
		for id, at := range stored {
			_, err := pool.Exec(ctx, `UPDATE messages SET received_at = now() - make_interval(secs => $2) WHERE id = $1`,
				id, (a.at - at).Seconds())
			require.NoError(t, err)
		}
		res, err := in.Receive(ctx, ingest.Request{
			TenantID: mt.TenantID, EnvironmentID: a.env, MessageType: messagetype.Prepare(mt), Docnum: a.docnum, Payload: payload,
			IdempotencyKey: a.key, Source: ingest.Source{Endpoint: ingest.EndpointReceiveMessage, Actor: "test"},
		})
		require.NoError(t, err)
		byIngest := res.Outcome == ingest.DuplicateFingerprint
		if res.Outcome == ingest.Created {
			stored[res.MessageID] = a.at
		}

		byReplay, _ := r.decide(sampled{
			environment: a.env, docnum: a.docnum, receivedAt: time.Unix(0, 0).Add(a.at), keyed: a.key != "", payload: payload,
		})
		require.Equal(t, a.blocked, byIngest, "message %d: ingest", i)
		require.Equal(t, a.blocked, byReplay, "message %d: the editor's replay", i)
	}
}
