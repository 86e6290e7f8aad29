// Package blocked shows the blocked copies whose content differed from
// their original's, queues them for review, and records an admin's
// decision on each: accept the copy as a new message when the block was a
// false positive (a corrected order resent under the same business key,
// say), or dismiss it as reviewed, a duplicate after all. A release stores
// the copy as a message of its own without touching the original, which
// keeps matching retransmissions, and is recorded as a
// message.duplicate_released audit event; a dismissal as
// message.duplicate_dismissed. A copy is decided at most once: a row lock
// serialises concurrent decisions, and the update that records one only
// changes a copy not yet decided.
package blocked

import (
	"context"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/lefia/edihub/internal/apperr"
	"github.com/lefia/edihub/internal/auditevent"
	"github.com/lefia/edihub/internal/auth"
	"github.com/lefia/edihub/internal/db"
	"github.com/lefia/edihub/internal/delivery"
	"github.com/lefia/edihub/internal/messageview"
	"github.com/lefia/edihub/internal/payloaddiff"
	"github.com/lefia/edihub/internal/rollup"
	"github.com/lefia/edihub/internal/storedview"
)

// MaxReasonLength is the longest reason an admin may give, in characters.
const MaxReasonLength = 1000

// Service reads blocked copies and releases them.
type Service struct {
	pool *pgxpool.Pool
	q    *db.Queries
	// plans runs the review queue's queries with custom plans (see
	// db.CustomPlans), so that its optional filters fold away and the
	// planner walks the review index that fits the rest.
	plans      *db.Queries
	deliveries *delivery.Service
}

// New returns a Service on pool; deliveries writes the deliveries of every
// copy it releases, as ingest does for the messages it stores.
func New(pool *pgxpool.Pool, deliveries *delivery.Service) *Service {
	return &Service{pool: pool, q: db.On(pool), plans: db.On(db.CustomPlans{Pool: pool}), deliveries: deliveries}
}

// Copy is a kept blocked copy as its page shows it.
type Copy struct {
	ID          int64
	Tenant      string
	Environment string
	MessageType string
	Docnum      string
	ReceivedAt  time.Time
	Arrivals    Arrivals
	Sender      auditevent.Sender
	ContentHash string
	Fingerprint string
	Original    Original
	// Changes turn the original's payload into the copy's.
	Changes []payloaddiff.Change
	// Payload is the copy's payload as its page shows it.
	Payload messageview.PayloadView
	// Received is what the copy arrived as when that was not its JSON
	// payload (IDoc-XML), as a stored message keeps it; Payload is then the
	// JSON view its paths read and Changes compare.
	Received *messageview.Received
	// Released is set once an admin accepted the copy as a new message.
	Released *Released
	// Dismissed is set once an admin reviewed the copy and left it blocked.
	Dismissed *Dismissed
}

// Arrivals say how often the same changed copy was blocked while it awaited
// review (a sender resending a packet sends it again): Count times, the
// last at Last. A copy that arrived once has Count 1 and Last its
// ReceivedAt.
type Arrivals struct {
	Count int32
	Last  time.Time
}

// Repeated says whether the copy arrived more than once.
func (a Arrivals) Repeated() bool { return a.Count > 1 }

func arrivals(count int32, received time.Time, lastSeen *time.Time) Arrivals {
	a := Arrivals{Count: count, Last: received.UTC()}
	if lastSeen != nil {
		a.Last = lastSeen.UTC()
	}
	return a
}

// Dismissed says when, by whom and why a copy was left blocked.
type Dismissed struct {
	At     time.Time
	By     string // the admin's email; "" when the account is gone
	Reason string
}

// Original is the stored message a copy was blocked against.
type Original struct {
	ID         int64
	Docnum     string
	ReceivedAt time.Time
}

// Released says when, by whom and why a copy became a message.
type Released struct {
	MessageID int64
	At        time.Time
	By        string // the admin's email; "" when the account is gone
	Reason    string
}

// Get loads copy id within scope, with its diff against the original. A
// copy outside the scope is reported as missing, so its existence is not
// revealed.
func (s *Service) Get(ctx context.Context, scope auth.Scope, id int64) (Copy, error) {
	row, err := s.q.BlockedCopyGet(ctx, db.BlockedCopyGetParams{
		ID: id, ScopeTenantID: scope.TenantFilter(), ShownBytes: messageview.MaxShownBytes,
	})
	if errors.Is(err, db.ErrNotFound) {
		return Copy{}, notFound(id)
	}
	if err != nil {
		return Copy{}, fmt.Errorf("load blocked copy %d: %w", id, err)
	}
	c := Copy{
		ID: row.ID, Tenant: row.TenantSlug, Environment: row.EnvironmentSlug, MessageType: row.MessageTypeCode,
		Docnum: db.OrEmpty(row.Docnum), ReceivedAt: row.ReceivedAt.UTC(), ContentHash: hex.EncodeToString(row.ContentHash),
		Arrivals:    arrivals(row.Copies, row.ReceivedAt, row.LastSeenAt),
		Fingerprint: db.OrEmpty(row.Fingerprint),
		Received:    messageview.ReceivedForm(row.ContentType, row.ReceivedHead, int(row.ReceivedSize), row.PacketPosition, row.PacketSize),
		Original: Original{
			ID: row.OriginalMessageID, Docnum: db.OrEmpty(row.OriginalDocnum), ReceivedAt: row.OriginalReceivedAt.UTC(),
		},
	}
	if err := json.Unmarshal(row.Sender, &c.Sender); err != nil {
		return Copy{}, fmt.Errorf("decode sender of blocked copy %d: %w", id, err)
	}
	view, err := storedview.Stored{
		Payload: row.Payload, ContentType: row.ContentType, Received: row.ViewBytes, Frame: row.EdiFrame,
	}.View()
	if err != nil {
		return Copy{}, fmt.Errorf("rebuild the view of blocked copy %d: %w", id, err)
	}
	original, err := storedview.Stored{
		Payload: row.OriginalPayload, ContentType: row.OriginalContentType, Received: row.OriginalViewBytes, Frame: row.OriginalEdiFrame,
	}.View()
	if err != nil {
		return Copy{}, fmt.Errorf("rebuild the view of message %d: %w", row.OriginalMessageID, err)
	}
	if c.Changes, err = payloaddiff.Compare(original, view); err != nil {
		return Copy{}, fmt.Errorf("compare blocked copy %d with message %d: %w", id, row.OriginalMessageID, err)
	}
	c.Payload = messageview.View(view)
	if row.ReleasedMessageID != nil {
		c.Released = &Released{
			MessageID: *row.ReleasedMessageID, At: row.ReleasedAt.UTC(), By: db.OrEmpty(row.ReleasedByEmail),
			Reason: db.OrEmpty(row.ReleaseReason),
		}
	}
	if row.DismissedAt != nil {
		c.Dismissed = &Dismissed{At: row.DismissedAt.UTC(), By: db.OrEmpty(row.DismissedByEmail), Reason: db.OrEmpty(row.DismissReason)}
	}
	return c, nil
}

// Release stores copy id as a new message on behalf of admin u, who gives
// reason, and returns the new message's id. In one transaction it locks
// the copy, stores it as a message that computes the copy's fingerprint but
// does not claim it (the original stays the message retransmissions
// match), records the release on the copy and writes the audit event. A
// copy already released, also by a concurrent call that committed first,
// is refused with a Conflict naming the message it became.
func (s *Service) Release(ctx context.Context, u auth.User, id int64, reason string) (int64, error) {
	var newID int64
	err := s.decide(ctx, u, id, reason, "why this copy is a message of its own", func(tx pgx.Tx, q *db.Queries, c db.BlockedCopyLockForReleaseRow, reason string) error {
		var err error
		if newID, err = q.BlockedCopyInsertMessage(ctx, id); err != nil {
			return fmt.Errorf("store blocked copy %d as a message: %w", id, err)
		}
		if err := rollup.CountLate(ctx, q, c.TenantID, newID); err != nil {
			return err
		}
		if _, err := s.deliveries.EnqueueTx(ctx, tx, newID); err != nil {
			return fmt.Errorf("write deliveries of message %d: %w", newID, err)
		}
		n, err := q.BlockedCopyMarkReleased(ctx, db.BlockedCopyMarkReleasedParams{
			ID: id, ReleasedMessageID: newID, ReleasedBy: u.ID, ReleaseReason: reason,
		})
		if err := recorded(id, n, err); err != nil {
			return err
		}
		return auditevent.Write(ctx, q, db.AuditEventInsertParams{
			TenantID: &c.TenantID, EnvironmentID: &c.EnvironmentID, MessageTypeID: &c.MessageTypeID, MessageID: &newID,
			Action: auditevent.DuplicateReleased, Actor: u.Actor(), MatchKey: c.Fingerprint,
		}, auditevent.ReleasedDetails{
			CopyID: id, OriginalMessageID: c.OriginalMessageID, NewMessageID: newID, Reason: reason, AdminEmail: u.Email,
		})
	})
	return newID, err
}

// Dismiss records on behalf of admin u, who gives reason, that copy id was
// reviewed and stays a blocked duplicate: the copy is marked dismissed and
// the audit event, about the original, written in one transaction. A copy
// already decided is refused as Release refuses it.
func (s *Service) Dismiss(ctx context.Context, u auth.User, id int64, reason string) error {
	return s.decide(ctx, u, id, reason, "why this copy is a duplicate after all", func(_ pgx.Tx, q *db.Queries, c db.BlockedCopyLockForReleaseRow, reason string) error {
		n, err := q.BlockedCopyMarkDismissed(ctx, db.BlockedCopyMarkDismissedParams{ID: id, DismissedBy: u.ID, DismissReason: reason})
		if err := recorded(id, n, err); err != nil {
			return err
		}
		return auditevent.Write(ctx, q, db.AuditEventInsertParams{
			TenantID: &c.TenantID, EnvironmentID: &c.EnvironmentID, MessageTypeID: &c.MessageTypeID,
			MessageID: &c.OriginalMessageID, Action: auditevent.DuplicateDismissed, Actor: u.Actor(), MatchKey: c.Fingerprint,
		}, auditevent.DismissedDetails{
			CopyID: id, OriginalMessageID: c.OriginalMessageID, Reason: reason, AdminEmail: u.Email,
		})
	})
}

// decide runs record, the writes of one decision on copy id by admin u, in
// a transaction that first locks the copy. A copy outside u's scope is
// missing; one decided already, also by a concurrent call that committed
// first, is refused with a Conflict saying how. reason must say what;
// record gets it without surrounding space.
func (s *Service) decide(ctx context.Context, u auth.User, id int64, reason, what string,
	record func(tx pgx.Tx, q *db.Queries, c db.BlockedCopyLockForReleaseRow, reason string) error) error {
	if !u.IsAdmin() {
		return auth.ErrAdminOnly
	}
	reason, err := checkReasonFor(reason, what)
	if err != nil {
		return err
	}
	return db.WithPgxTx(ctx, s.pool, func(tx pgx.Tx) error {
		q := db.On(tx)
		c, err := q.BlockedCopyLockForRelease(ctx, db.BlockedCopyLockForReleaseParams{
			ID: id, ScopeTenantID: u.Scope().TenantFilter(),
		})
		if errors.Is(err, db.ErrNotFound) {
			return notFound(id)
		}
		if err != nil {
			return fmt.Errorf("lock blocked copy %d: %w", id, err)
		}
		if err := undecided(c); err != nil {
			return err
		}
		return record(tx, q, c, reason)
	})
}

// recorded checks the update that records a decision, which changes one
// row. The lock decide takes makes a second decision unreachable; should
// it ever be lost, the guard in the update still refuses one.
func recorded(id int64, n int64, err error) error {
	if err != nil {
		return fmt.Errorf("record the decision on blocked copy %d: %w", id, err)
	}
	if n != 1 {
		return fmt.Errorf("blocked copy %d was decided by another transaction", id)
	}
	return nil
}

// undecided refuses a decision on a copy locked for it that was decided
// already.
func undecided(c db.BlockedCopyLockForReleaseRow) error {
	switch {
	case c.ReleasedMessageID != nil:
		return alreadyReleased(*c.ReleasedMessageID)
	case c.DismissedAt != nil:
		return apperr.New(apperr.Conflict, "already-dismissed", "this copy was already dismissed as reviewed")
	}
	return nil
}

// checkReasonFor returns the reason of a decision without surrounding
// space, or why it cannot be recorded: it must say what.
func checkReasonFor(reason, what string) (string, error) {
	reason = strings.TrimSpace(reason)
	if n := utf8.RuneCountInString(reason); n == 0 || n > MaxReasonLength {
		return "", apperr.New(apperr.Invalid, "invalid-reason", "say in 1 to %d characters %s", MaxReasonLength, what)
	}
	return reason, nil
}

// Origin is where a released message came from.
type Origin struct {
	CopyID     int64
	OriginalID int64
	At         time.Time
	By         string // the admin's email; "" when the account is gone
	Reason     string
}

// Copies is what a message page shows about blocked copies: where the
// message came from, if it was released from a copy, and how many changed
// copies were blocked against it and released.
type Copies struct {
	Origin   *Origin
	Kept     int64
	Released int64
}

// OfMessage returns the blocked copies related to message id, within scope.
func (s *Service) OfMessage(ctx context.Context, scope auth.Scope, id int64) (Copies, error) {
	var out Copies
	counts, err := s.q.BlockedCopyCountsOfOriginal(ctx, db.BlockedCopyCountsOfOriginalParams{
		OriginalMessageID: id, ScopeTenantID: scope.TenantFilter(),
	})
	if err != nil {
		return out, fmt.Errorf("count blocked copies of message %d: %w", id, err)
	}
	out.Kept, out.Released = counts.Kept, counts.Released
	row, err := s.q.BlockedCopyOfReleasedMessage(ctx, db.BlockedCopyOfReleasedMessageParams{
		MessageID: id, ScopeTenantID: scope.TenantFilter(),
	})
	switch {
	case errors.Is(err, db.ErrNotFound):
		return out, nil
	case err != nil:
		return out, fmt.Errorf("find the copy message %d was released from: %w", id, err)
	}
	out.Origin = &Origin{
		CopyID: row.ID, OriginalID: row.OriginalMessageID, At: row.ReleasedAt.UTC(),
		By: db.OrEmpty(row.ReleasedByEmail), Reason: db.OrEmpty(row.ReleaseReason),
	}
	return out, nil
}

func notFound(id int64) error {
	return apperr.New(apperr.NotFound, "not-found", "there is no blocked copy %d", id)
}

func alreadyReleased(messageID int64) error {
	return apperr.New(apperr.Conflict, "already-released", "this copy was already released as message %d", messageID)
}

// ReceivedPart is messageview.Service.ReceivedPart for blocked copy id.
func (s *Service) ReceivedPart(ctx context.Context, scope auth.Scope, id, offset int64, length int) (messageview.Part, error) {
	row, err := s.q.BlockedCopyReceivedPart(ctx, db.BlockedCopyReceivedPartParams{
		ID: id, ScopeTenantID: scope.TenantFilter(), PartStart: int32(offset) + 1, PartLength: int32(length),
	})
	if errors.Is(err, db.ErrNotFound) {
		return messageview.Part{}, notFound(id)
	}
	if err != nil {
		return messageview.Part{}, fmt.Errorf("read blocked copy %d from byte %d: %w", id, offset, err)
	}
	return messageview.Part{ContentType: row.ContentType, Size: row.Size, Bytes: row.Part}, nil
}
