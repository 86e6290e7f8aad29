package ingest

import (
	"bytes"
	"context"
	"fmt"

	"github.com/lefia/edihub/internal/apperr"
	"github.com/lefia/edihub/internal/canon"
	"github.com/lefia/edihub/internal/db"
)

// receiveWithKey stores m under its Idempotency-Key, or replays the answer
// the key's first request got. Claiming the key is an insert into the
// idempotency_keys primary key: a concurrent request with the same key
// waits on that insert until the first transaction ends, then replays.
func (s *Service) receiveWithKey(ctx context.Context, q *db.Queries, m message) (Result, error) {
	requestHash := canon.RequestHash(m.messageType.Code, m.Docnum, m.canonical)
	keyID := keyID{TenantID: m.TenantID, EnvironmentID: m.EnvironmentID, Scope: m.KeyScope, Key: m.IdempotencyKey}
	for range maxAttempts {
		claimed, err := q.IdempotencyKeyClaim(ctx, db.IdempotencyKeyClaimParams{
			TenantID: keyID.TenantID, EnvironmentID: keyID.EnvironmentID, Scope: keyID.Scope, Key: keyID.Key,
			RequestHash: requestHash[:], TtlSeconds: s.keyTTL.Seconds(),
		})
		if err != nil {
			return Result{}, fmt.Errorf("claim idempotency key: %w", err)
		}
		if claimed == 1 {
			return storeUnderKey(ctx, q, m, keyID)
		}
		res, err := replay(ctx, q, m, keyID, requestHash)
		if err != errRetry {
			return res, err
		}
	}
	return Result{}, fmt.Errorf("claim idempotency key: still contended after %d attempts", maxAttempts)
}

type keyID struct {
	TenantID, EnvironmentID int64
	Scope, Key              string
}

// storeUnderKey stores m without claiming its fingerprint (the key is the
// client's statement of identity) and keeps the answer for replays.
func storeUnderKey(ctx context.Context, q *db.Queries, m message, k keyID) (Result, error) {
	row, err := insert(ctx, q, m, false)
	if err != nil {
		return Result{}, fmt.Errorf("store message: %w", err)
	}
	res, err := created(m, row)
	if err != nil {
		return Result{}, err
	}
	if err := q.IdempotencyKeyComplete(ctx, db.IdempotencyKeyCompleteParams{
		TenantID: k.TenantID, EnvironmentID: k.EnvironmentID, Scope: k.Scope, Key: k.Key,
		MessageID: &row.ID, ResponseBody: res.Body,
	}); err != nil {
		return Result{}, fmt.Errorf("keep idempotent response: %w", err)
	}
	return res, nil
}

// replay answers a repeated key with the first answer, or refuses it when
// the content differs from what the key was first used for.
func replay(ctx context.Context, q *db.Queries, m message, k keyID, requestHash [32]byte) (Result, error) {
	stored, err := q.IdempotencyKeyGet(ctx, db.IdempotencyKeyGetParams{
		TenantID: k.TenantID, EnvironmentID: k.EnvironmentID, Scope: k.Scope, Key: k.Key,
	})
	if db.IsNotFound(err) {
		return Result{}, errRetry // expired and swept since the claim
	}
	if err != nil {
		return Result{}, fmt.Errorf("load idempotency key: %w", err)
	}
	if !bytes.Equal(stored.RequestHash, requestHash[:]) {
		return Result{}, apperr.New(apperr.Unprocessable, "idempotency-key-reused",
			"this Idempotency-Key was already used for a request with different content "+
				"(message_type, docnum or payload); use a new key for a new message")
	}
	if stored.MessageID == nil || stored.ResponseBody == nil {
		// Claim, store and complete commit together, so a committed key
		// always has its answer; this would be a bug, not a race.
		return Result{}, fmt.Errorf("idempotency key %q has no stored response", k.Key)
	}
	original, err := q.MessageGet(ctx, db.MessageGetParams{TenantID: k.TenantID, ID: *stored.MessageID})
	if err != nil {
		return Result{}, fmt.Errorf("load original message: %w", err)
	}
	ref := originalRef{ID: original.ID, Docnum: original.Docnum, ContentHash: original.ContentHash}
	if err := recordBlocked(ctx, q, m, modeIdempotencyKey, k.Key, ref); err != nil {
		return Result{}, err
	}
	return Result{Outcome: ReplayedKey, MessageID: original.ID, Body: stored.ResponseBody}, nil
}
