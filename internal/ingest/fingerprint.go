package ingest

import (
	"context"
	"fmt"

	"github.com/lefia/edihub/internal/db"
)

// receiveByFingerprint stores m unless a message with the same fingerprint
// arrived within the window. The insert itself is the check: the partial
// unique index uq_messages_fingerprint lets exactly one of any number of
// concurrent inserts through, and the others then find the holder.
func receiveByFingerprint(ctx context.Context, q *db.Queries, m message) (Result, error) {
	if m.fingerprint == nil {
		row, err := insert(ctx, q, m, false)
		if err != nil {
			return Result{}, fmt.Errorf("store message: %w", err)
		}
		return created(m, row)
	}
	for range maxAttempts {
		row, err := insert(ctx, q, m, true)
		if err == nil {
			return created(m, row)
		}
		if !db.IsNotFound(err) {
			return Result{}, fmt.Errorf("store message: %w", err)
		}
		res, err := againstHolder(ctx, q, m)
		if err != errRetry {
			return res, err
		}
	}
	return Result{}, fmt.Errorf("store message: fingerprint still contended after %d attempts", maxAttempts)
}

// againstHolder decides about the message that holds m's fingerprint: inside
// the window m is its duplicate; outside, the holder gives the claim up so
// that m, retried, becomes the message later retransmissions match.
func againstHolder(ctx context.Context, q *db.Queries, m message) (Result, error) {
	holder, err := q.MessageFingerprintHolder(ctx, db.MessageFingerprintHolderParams{
		TenantID: m.TenantID, EnvironmentID: m.EnvironmentID, Fingerprint: m.fingerprint, WindowHours: m.windowHours,
	})
	if db.IsNotFound(err) {
		return Result{}, errRetry // released by another request since the insert
	}
	if err != nil {
		return Result{}, fmt.Errorf("load fingerprint holder: %w", err)
	}
	if !holder.WithinWindow {
		if _, err := q.MessageReleaseFingerprint(ctx, db.MessageReleaseFingerprintParams{
			TenantID: m.TenantID, ID: holder.ID, Fingerprint: m.fingerprint,
		}); err != nil {
			return Result{}, fmt.Errorf("release expired fingerprint: %w", err)
		}
		return Result{}, errRetry
	}
	original := originalRef{ID: holder.ID, Docnum: holder.Docnum, ContentHash: holder.ContentHash}
	if err := recordBlocked(ctx, q, m, modeFingerprint, *m.fingerprint, original); err != nil {
		return Result{}, err
	}
	body, err := encode(Receipt{
		ID: holder.ID, Status: "duplicate", Duplicate: true, DuplicateOf: &holder.ID,
		MessageType: m.messageType.Code, Docnum: holder.Docnum, Fingerprint: m.fingerprint,
		ReceivedAt: holder.ReceivedAt.UTC(),
	})
	return Result{Outcome: DuplicateFingerprint, MessageID: holder.ID, Body: body}, err
}

func created(m message, row db.MessageInsertRow) (Result, error) {
	body, err := encode(m.receipt(row))
	return Result{Outcome: Created, MessageID: row.ID, Body: body}, err
}
