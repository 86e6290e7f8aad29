package ingest

import (
	"context"
	"fmt"
	"time"

	"github.com/lefia/edihub/internal/auditevent"
	"github.com/lefia/edihub/internal/db"
)

// receiveByFingerprint stores m unless a message with the same fingerprint
// arrived within the window. The insert itself is the check: the partial
// unique index uq_messages_fingerprint lets exactly one of any number of
// concurrent inserts through, and the same statement then finds the holder
// and records the blocked duplicate (MessageStoreOrBlock). It runs in the
// caller's transaction (storeTx), which commits before an answer is given.
func receiveByFingerprint(ctx context.Context, q *db.Queries, m message) (Result, error) {
	if m.fingerprint == nil {
		row, err := q.MessageInsert(ctx, insertParams(m))
		if err != nil {
			return Result{}, fmt.Errorf("store message: %w", err)
		}
		return created(m, row.ID, row.ReceivedAt)
	}
	for range maxAttempts {
		row, err := q.MessageStoreOrBlock(ctx, db.MessageStoreOrBlockParams{
			TenantID: m.TenantID, EnvironmentID: m.EnvironmentID, MessageTypeID: m.MessageType.ID,
			Docnum: m.docnumOrNull, Payload: m.Payload, ContentHash: m.contentHash[:], Fingerprint: m.fingerprint,
			SourceEndpoint: m.Source.Endpoint, IntegrationID: m.Source.IntegrationID, RemoteAddr: m.Source.RemoteAddr,
			WindowHours: m.windowHours, Action: auditevent.DuplicateBlocked, Actor: m.Source.Actor, Details: m.blocked,
			Sender: m.sender, ContentType: m.stored.contentType, ReceivedBytes: m.stored.bytes,
			PacketPosition: m.stored.packetPosition, PacketSize: m.stored.packetSize, KeyValues: m.keyValues,
		})
		if err != nil {
			return Result{}, fmt.Errorf("store message: %w", err)
		}
		switch {
		case row.InsertedID != nil:
			return created(m, *row.InsertedID, *row.InsertedAt)
		case row.HolderID == nil:
			// The holder committed after the statement's snapshot, or
			// released its claim since: a fresh statement sees which.
			continue
		case !*row.WithinWindow:
			// The holder is too old to block m: it gives the claim up so
			// that m, retried, becomes the message later retransmissions
			// match. Should m then fail, the next retransmission is simply
			// stored as new, as it would have been anyway.
			if _, err := q.MessageReleaseFingerprint(ctx, db.MessageReleaseFingerprintParams{
				TenantID: m.TenantID, EnvironmentID: m.EnvironmentID, ID: *row.HolderID, Fingerprint: m.fingerprint,
			}); err != nil {
				return Result{}, fmt.Errorf("release expired fingerprint: %w", err)
			}
			continue
		}
		body, err := encode(Receipt{
			ID: *row.HolderID, Status: "duplicate", Duplicate: true, DuplicateOf: row.HolderID,
			MessageType: m.MessageType.Code, Docnum: row.HolderDocnum, Fingerprint: m.fingerprint,
			ReceivedAt: row.HolderReceivedAt.UTC(),
		})
		return Result{Outcome: DuplicateFingerprint, MessageID: *row.HolderID, Body: body}, err
	}
	return Result{}, fmt.Errorf("store message: fingerprint still contended after %d attempts", maxAttempts)
}

func created(m message, id int64, receivedAt time.Time) (Result, error) {
	body, err := encode(m.receipt(id, receivedAt))
	return Result{Outcome: Created, MessageID: id, Body: body}, err
}

// insertParams stores m without a fingerprint claim (MessageInsert): m has
// no fingerprint, or is stored under an Idempotency-Key that another message
// of its request claimed.
func insertParams(m message) db.MessageInsertParams {
	p := db.MessageInsertParams{
		TenantID: m.TenantID, EnvironmentID: m.EnvironmentID, MessageTypeID: m.MessageType.ID,
		Docnum: m.docnumOrNull, Payload: m.Payload, ContentHash: m.contentHash[:], ComputedFingerprint: m.fingerprint,
		SourceEndpoint: m.Source.Endpoint, IntegrationID: m.Source.IntegrationID, RemoteAddr: m.Source.RemoteAddr,
		ContentType: m.stored.contentType, ReceivedBytes: m.stored.bytes,
		PacketPosition: m.stored.packetPosition, PacketSize: m.stored.packetSize, KeyValues: m.keyValues,
	}
	if m.IdempotencyKey != "" {
		p.IdempotencyKey = &m.IdempotencyKey
	}
	return p
}
