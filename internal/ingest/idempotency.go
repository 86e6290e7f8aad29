package ingest

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/lefia/edihub/internal/apperr"
	"github.com/lefia/edihub/internal/auditevent"
	"github.com/lefia/edihub/internal/db"
)

// maxKeyLength is the longest idempotency key the idempotency_keys table
// accepts.
const maxKeyLength = 255

// CheckKey checks the form the idempotency_keys table accepts, both for
// keys clients send and for webhook delivery ids used as keys.
func CheckKey(key string) error {
	var err *apperr.Error
	if len(key) == 0 || len(key) > maxKeyLength {
		err = apperr.New(apperr.Invalid, "invalid-idempotency-key",
			"Idempotency-Key must be 1 to %d characters long", maxKeyLength)
	}
	for i := 0; err == nil && i < len(key); i++ {
		if key[i] < 0x20 || key[i] > 0x7e {
			err = apperr.New(apperr.Invalid, "invalid-idempotency-key",
				"Idempotency-Key may hold printable ASCII characters only (byte %d is not)", i+1)
		}
	}
	if err == nil {
		return nil
	}
	err.IdempotencyKey = key
	return err
}

// receiveWithKey stores m under its Idempotency-Key, or replays the answer
// the key's first request got. A key that is already taken is answered by
// one statement (IdempotencyKeyReplay); otherwise the key is claimed by an
// insert into the idempotency_keys primary key, in a transaction that also
// stores the message and keeps the answer. A concurrent request with the
// same key waits on that insert until the first transaction ends, and then
// finds the key taken.
func (s *Service) receiveWithKey(ctx context.Context, m message) (Result, error) {
	return s.storeWithKey(ctx, m, true)
}

// storeWithKey is receiveWithKey, which replays first (replayFirst), or
// its claim path for a request whose group has just found the key not
// taken: that one claims first, and replays only after losing the claim to
// a concurrent request, as receiveWithKey does.
func (s *Service) storeWithKey(ctx context.Context, m message, replayFirst bool) (Result, error) {
	k := m.keyID()
	for attempt := range maxAttempts {
		if replayFirst || attempt > 0 {
			res, replayed, err := replay(ctx, s.ownTx, k, m.requestHash, []message{m})
			if err != nil || replayed {
				return res, err
			}
		}
		res, err := s.storeOneTx(ctx, func(q *db.Queries) (Result, error) {
			res, err := s.claimAndStore(ctx, q, m, k)
			if err != nil {
				return Result{}, err
			}
			return completeWithDeliveries(ctx, q, k, res)
		})
		if err != errRetry {
			return res, err
		}
	}
	return Result{}, fmt.Errorf("claim idempotency key: still contended after %d attempts", maxAttempts)
}

// keyLifetime is how long m's key is kept.
func (s *Service) keyLifetime(m message) time.Duration {
	if m.KeyIsContent {
		return time.Duration(m.windowHours) * time.Hour
	}
	return s.keyTTL
}

type keyID struct {
	TenantID, EnvironmentID int64
	Scope, Key              string
}

// keyID names the key of m, a single message with an Idempotency-Key.
func (m message) keyID() keyID {
	return keyID{TenantID: m.TenantID, EnvironmentID: m.EnvironmentID, Scope: m.KeyScope, Key: m.IdempotencyKey}
}

// claimAndStore claims k and stores m under it without claiming m's
// fingerprint (the key is the client's statement of identity); the caller
// completes the key with the answer in the same transaction. It returns
// errRetry when another request holds the key; the caller's transaction
// then rolls back and replays.
//
// The claim is sent as a batch of its own (db.One), so that when it is the
// first statement of its transaction the BEGIN travels with it.
func (s *Service) claimAndStore(ctx context.Context, q *db.Queries, m message, k keyID) (Result, error) {
	row, err := db.One(ctx, q, (*db.Queries).IdempotencyKeyClaimAndStore, db.IdempotencyKeyClaimAndStoreParams{
		TenantID: k.TenantID, EnvironmentID: k.EnvironmentID, Scope: k.Scope, Key: k.Key,
		RequestHash: m.requestHash[:], TtlSeconds: s.keyLifetime(m).Seconds(),
		MessageTypeID: m.MessageType.ID, Docnum: m.docnumOrNull, Payload: m.stored.payload, ContentHash: m.contentHash[:],
		ComputedFingerprint: m.fingerprint, SourceEndpoint: m.Source.Endpoint, IntegrationID: m.Source.IntegrationID,
		RemoteAddr: m.Source.RemoteAddr, ContentType: m.stored.contentType, ReceivedBytes: m.stored.bytes, EdiFrame: m.stored.frame,
		PacketPosition: m.stored.packetPosition, PacketSize: m.stored.packetSize, KeyValues: m.keyValues,
	})
	if errors.Is(err, db.ErrNotFound) {
		return Result{}, errRetry
	}
	if err != nil {
		return Result{}, fmt.Errorf("claim idempotency key and store message: %w", err)
	}
	return created(m, row.ID, row.ReceivedAt), nil
}

// complete keeps res, the answer to the request that claimed k, for replays.
func complete(ctx context.Context, q *db.Queries, k keyID, res Result) error {
	if err := q.IdempotencyKeyComplete(ctx, completeParams(k, res)); err != nil {
		return fmt.Errorf("keep idempotent response: %w", err)
	}
	return nil
}

// completeParams keeps res as the answer of k.
func completeParams(k keyID, res Result) db.IdempotencyKeyCompleteParams {
	return db.IdempotencyKeyCompleteParams{
		TenantID: k.TenantID, EnvironmentID: k.EnvironmentID, Scope: k.Scope, Key: k.Key,
		MessageID: &res.MessageID, ResponseBody: res.Body,
	}
}

// completeWithDeliveries keeps res, the answer to the single message that
// claimed k, for replays, and writes the message's deliveries, both in one
// round trip; storeTx then only queues their jobs.
func completeWithDeliveries(ctx context.Context, q *db.Queries, k keyID, res Result) (Result, error) {
	var (
		b                     db.Batch
		kept                  struct{}
		written               []db.DeliveryCreateForMessagesRow
		completeErr, writeErr error
	)
	if err := db.Queue(ctx, &b, (*db.Queries).DeliveryCreateForMessages, []int64{res.MessageID}, &written, &writeErr); err != nil {
		return Result{}, fmt.Errorf("write deliveries: %w", err)
	}
	if err := db.Queue(ctx, &b, db.Exec((*db.Queries).IdempotencyKeyComplete), completeParams(k, res), &kept, &completeErr); err != nil {
		return Result{}, fmt.Errorf("keep idempotent response: %w", err)
	}
	switch err := b.Send(ctx, q); {
	case err != nil:
		return Result{}, fmt.Errorf("keep idempotent response: %w", err)
	case writeErr != nil:
		return Result{}, fmt.Errorf("write deliveries: %w", writeErr)
	case completeErr != nil:
		return Result{}, fmt.Errorf("keep idempotent response: %w", completeErr)
	}
	deliveries := make([]db.DeliveryCreateForStoredRow, len(written))
	for i, w := range written {
		deliveries[i] = db.DeliveryCreateForStoredRow{ID: w.ID, DestinationID: w.DestinationID, MessageID: res.MessageID}
	}
	return res.withWrittenDeliveries(deliveries), nil
}

// replay answers a request whose key is taken with the first answer, and
// records one blocked duplicate per message of the request (ms, in order,
// whose hash is requestHash: one message, or every IDoc of a packet or item
// of a batch stored under one key), or refuses it when the content differs
// from what the key was first used for. replayed is false when the key is
// not taken. res names the message the key points at: the request's first.
func replay(ctx context.Context, q *db.Queries, k keyID, requestHash [32]byte, ms []message) (res Result, replayed bool, err error) {
	row, err := db.One(ctx, q, (*db.Queries).IdempotencyKeyReplay, replayParams(k, requestHash, ms))
	if err != nil && !errors.Is(err, db.ErrNotFound) {
		return Result{}, false, fmt.Errorf("replay idempotency key: %w", err)
	}
	return replayAnswer(k, len(ms), row, err == nil)
}

// replayParams is IdempotencyKeyReplay's parameters for replay.
func replayParams(k keyID, requestHash [32]byte, ms []message) db.IdempotencyKeyReplayParams {
	p := db.IdempotencyKeyReplayParams{
		TenantID: k.TenantID, EnvironmentID: k.EnvironmentID, Scope: k.Scope, Key: k.Key,
		RequestHash: requestHash[:], Action: auditevent.DuplicateBlocked, Actor: ms[0].Source.Actor,
		Details: make([][]byte, len(ms)), ContentHashes: make([][]byte, len(ms)), MessageTypeIds: make([]int64, len(ms)),
	}
	for i, m := range ms {
		p.Details[i], p.ContentHashes[i], p.MessageTypeIds[i] = m.blocked, m.contentHash[:], m.MessageType.ID
	}
	return p
}

// replayAnswer reads IdempotencyKeyReplay's answer, row, to a request of n
// messages; taken says that the key is live and completed (the statement
// returned a row).
func replayAnswer(k keyID, n int, row db.IdempotencyKeyReplayRow, taken bool) (res Result, replayed bool, _ error) {
	if !taken {
		return Result{}, false, nil
	}
	if !row.SameRequest {
		reused := apperr.New(apperr.Unprocessable, "idempotency-key-reused",
			"this Idempotency-Key was already used for a request with different content "+
				"(message_type, docnum or payload); use a new key for a new message")
		reused.IdempotencyKey = k.Key
		return Result{}, false, reused
	}
	// Claim, store and complete commit together, and a message is never
	// deleted, so a completed key always has its messages, one per message
	// of the same request; anything else would be a bug, not a race.
	if row.OriginalID == nil || row.Blocked != int64(n) {
		return Result{}, false, fmt.Errorf("idempotency key %q: %d of %d stored messages found", k.Key, row.Blocked, n)
	}
	return Result{Outcome: ReplayedKey, MessageID: *row.OriginalID, Body: row.ResponseBody}, true, nil
}
