package ingest

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/lefia/edihub/internal/auditevent"
	"github.com/lefia/edihub/internal/db"
)

// receiveByFingerprint stores m unless a message with the same fingerprint
// arrived within the window. The insert itself is the check: the partial
// unique index uq_messages_fingerprint lets exactly one of any number of
// concurrent inserts through, and the same statement then finds the holder
// and records the blocked duplicate (MessageStoreOrBlock). The statement
// runs in the transaction that writes a new message's deliveries (storeTx),
// which commits before an answer is given.
func (s *Service) receiveByFingerprint(ctx context.Context, m message) (Result, error) {
	if m.fingerprint == nil {
		return s.storeTx(ctx, func(q *db.Queries) (Result, error) {
			row, err := q.MessageInsert(ctx, db.MessageInsertParams{
				TenantID: m.TenantID, EnvironmentID: m.EnvironmentID, MessageTypeID: m.messageType.ID,
				Docnum: m.docnumOrNull, Payload: m.Payload, ContentHash: m.contentHash[:],
				SourceEndpoint: m.Source.Endpoint, IntegrationID: m.Source.IntegrationID, RemoteAddr: m.Source.RemoteAddr,
			})
			if err != nil {
				return Result{}, fmt.Errorf("store message: %w", err)
			}
			return created(m, row.ID, row.ReceivedAt)
		})
	}
	for range maxAttempts {
		res, err := s.storeTx(ctx, func(q *db.Queries) (Result, error) { return storeOrBlock(ctx, q, m) })
		var expired *expiredHolder
		switch {
		case errors.As(err, &expired):
			// The holder is too old to block m: it gives the claim up so
			// that m, retried, becomes the message later retransmissions
			// match. Should m then fail, the next retransmission is simply
			// stored as new, as it would have been anyway.
			if _, err := db.New(s.pool).MessageReleaseFingerprint(ctx, db.MessageReleaseFingerprintParams{
				TenantID: m.TenantID, ID: expired.id, Fingerprint: m.fingerprint,
			}); err != nil {
				return Result{}, fmt.Errorf("release expired fingerprint: %w", err)
			}
		case errors.Is(err, errRetry):
		default:
			return res, err
		}
	}
	return Result{}, fmt.Errorf("store message: fingerprint still contended after %d attempts", maxAttempts)
}

// expiredHolder is returned by storeOrBlock when the message holding the
// fingerprint is older than the window: its claim must be released, and
// committed, before m can be stored.
type expiredHolder struct{ id int64 }

func (e *expiredHolder) Error() string {
	return fmt.Sprintf("message %d holds the fingerprint beyond its window", e.id)
}

// storeOrBlock is one MessageStoreOrBlock: m stored, or blocked as a
// duplicate, or errRetry or *expiredHolder when it can be neither yet.
func storeOrBlock(ctx context.Context, q *db.Queries, m message) (Result, error) {
	row, err := q.MessageStoreOrBlock(ctx, db.MessageStoreOrBlockParams{
		TenantID: m.TenantID, EnvironmentID: m.EnvironmentID, MessageTypeID: m.messageType.ID,
		Docnum: m.docnumOrNull, Payload: m.Payload, ContentHash: m.contentHash[:], Fingerprint: m.fingerprint,
		SourceEndpoint: m.Source.Endpoint, IntegrationID: m.Source.IntegrationID, RemoteAddr: m.Source.RemoteAddr,
		WindowHours: m.windowHours, Action: auditevent.DuplicateBlocked, Actor: m.Source.Actor, Details: m.blocked,
		Sender: m.sender,
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
		return Result{}, errRetry
	case !*row.WithinWindow:
		return Result{}, &expiredHolder{id: *row.HolderID}
	}
	body, err := encode(Receipt{
		ID: *row.HolderID, Status: "duplicate", Duplicate: true, DuplicateOf: row.HolderID,
		MessageType: m.messageType.Code, Docnum: row.HolderDocnum, Fingerprint: m.fingerprint,
		ReceivedAt: row.HolderReceivedAt.UTC(),
	})
	return Result{Outcome: DuplicateFingerprint, MessageID: *row.HolderID, Body: body}, err
}

func created(m message, id int64, receivedAt time.Time) (Result, error) {
	body, err := encode(m.receipt(id, receivedAt))
	return Result{Outcome: Created, MessageID: id, Body: body}, err
}
