// Package partner keeps, for each sender and receiver of interchanges,
// the sequence of their control numbers: the latest one, when it arrived,
// and the numbers skipped that have not arrived since (Record, in the
// interchange's transaction), and shows them on the partners page (List).
// The interchange.gap alert rule (internal/alert) reads the same gaps.
package partner

import (
	"context"
	"errors"
	"fmt"
	"strconv"

	"github.com/lefia/edihub/internal/db"
)

// MaxGapsPerJump is the longest run of skipped numbers recorded as gaps.
// A longer jump (a partner renumbering, or jumping by a million) writes no
// gaps, only the jump on the partner, so that one interchange cannot write
// a million rows.
const MaxGapsPerJump = 1000

// Pair is a sender and receiver of interchanges in an environment, as
// interchanges scopes control numbers.
type Pair struct {
	TenantID, EnvironmentID    int64
	Standard, Sender, Receiver string
}

// gap names the gap of number at the pair, for PartnerGapClose.
func (p Pair) gap(number int64) db.PartnerGapCloseParams {
	return db.PartnerGapCloseParams{TenantID: p.TenantID, EnvironmentID: p.EnvironmentID, Standard: p.Standard,
		Sender: p.Sender, Receiver: p.Receiver, ControlNumber: number}
}

// Record notes that pair sent the interchange numbered controlNumber, in
// q's transaction, which must have claimed the number (a repeat within
// INTERCHANGE_WINDOW records nothing). It locks the pair's row until the
// transaction ends, so call it after the interchange's other locks: the
// pair's interchanges then update its sequence one at a time, and each
// sees the gaps the others left, whatever order they commit in.
//
// The numbers form runs: the first number seen starts one. A number above
// the run's highest opens the numbers between as gaps (up to
// MaxGapsPerJump); one below it closes its gap. Any other number below
// the highest changes nothing: an old number sent again after the window,
// or one below the run's start, which arrived after a higher one of the
// pair's first interchanges. The exception is 1 once the run started at 1:
// having been claimed, it was last seen more than INTERCHANGE_WINDOW ago,
// so the partner restarted (or wrapped at ISA13's 999999999) and a new run
// starts; the old run's open gaps stay open. Control numbers that are not
// numbers keep no sequence.
//
// Record sends its statements in a round trip of their own; an
// interchange's transaction queues them with its last ones (Queue).
func Record(ctx context.Context, q *db.Queries, pair Pair, controlNumber string) error {
	var b db.Batch
	r, err := Queue(ctx, &b, pair, controlNumber)
	if err != nil {
		return err
	}
	if err := b.Send(ctx, q); err != nil {
		return fmt.Errorf("record partner %s to %s: %w", pair.Sender, pair.Receiver, err)
	}
	return r.Finish(ctx, q)
}

// Queued is the record of an interchange queued in a batch by Queue, to
// travel with the interchange's other last statements: for a known pair's
// next number, as nearly every interchange's is, two statements record it
// and take the pair's lock (PartnerAdvance, and PartnerGapClose,
// which then closes the number's gap should an earlier run have left
// one); Finish records any other number as Record does, once the batch
// was sent.
type Queued struct {
	pair          Pair
	controlNumber string
	queued        bool
	advanceErr    error // nil when PartnerAdvance recorded the interchange
	closed        int64 // the gaps PartnerGapClose closed
	closeErr      error
}

// Queue queues in b the record of pair's interchange numbered
// controlNumber, for Finish to complete after b is sent in q's
// transaction, which must have claimed the number. It locks what Record
// locks, so queue it after the interchange's other locks.
func Queue(ctx context.Context, b *db.Batch, pair Pair, controlNumber string) (*Queued, error) {
	r := &Queued{pair: pair, controlNumber: controlNumber}
	number := sequenceNumber(controlNumber)
	if number == nil {
		return r, nil // Finish records it: no sequence to advance
	}
	var id int64
	err := db.Queue(ctx, b, (*db.Queries).PartnerAdvance, db.PartnerAdvanceParams{
		TenantID: pair.TenantID, EnvironmentID: pair.EnvironmentID, Standard: pair.Standard,
		Sender: pair.Sender, Receiver: pair.Receiver, ControlNumber: controlNumber, Number: number,
	}, &id, &r.advanceErr)
	if err != nil {
		return nil, fmt.Errorf("advance partner %s to %s: %w", pair.Sender, pair.Receiver, err)
	}
	// After the advance, which holds the pair's lock when it recorded the
	// number, so that this statement sees every gap the pair's other
	// interchanges left, as Record's own does.
	err = db.Queue(ctx, b, (*db.Queries).PartnerGapClose, pair.gap(*number), &r.closed, &r.closeErr)
	if err != nil {
		return nil, fmt.Errorf("close gap %d of partner %s to %s: %w", *number, pair.Sender, pair.Receiver, err)
	}
	r.queued = true
	return r, nil
}

// Finish records the interchange when the queued statements did not: for
// an unknown pair, a number that is not the next of its run, or one that
// is not a number.
func (r *Queued) Finish(ctx context.Context, q *db.Queries) error {
	if r.queued {
		// In the order they ran: a statement that failed aborted the
		// transaction, and every one after it failed for that.
		switch {
		case r.advanceErr != nil && !errors.Is(r.advanceErr, db.ErrNotFound):
			return fmt.Errorf("advance partner %s to %s: %w", r.pair.Sender, r.pair.Receiver, r.advanceErr)
		case r.closeErr != nil:
			return fmt.Errorf("close gap %s of partner %s to %s: %w", r.controlNumber, r.pair.Sender, r.pair.Receiver, r.closeErr)
		case r.advanceErr == nil:
			return nil
		}
	}
	return recordByLock(ctx, q, r.pair, r.controlNumber, r.closed)
}

// recordByLock records the interchange whatever its number: it locks the
// pair's row first, or creates it. closedBefore counts the number's gaps a
// statement before it closed.
func recordByLock(ctx context.Context, q *db.Queries, pair Pair, controlNumber string, closedBefore int64) error {
	number := sequenceNumber(controlNumber)
	// A known pair, as nearly every interchange's is, is locked at once.
	// Of a new pair's first interchanges sent at once, the one that
	// creates its row is done; the others wait in PartnerCreate until it
	// commits, and then lock the row it made.
	p, err := lock(ctx, q, pair)
	if errors.Is(err, db.ErrNotFound) {
		_, err = q.PartnerCreate(ctx, db.PartnerCreateParams{
			TenantID: pair.TenantID, EnvironmentID: pair.EnvironmentID, Standard: pair.Standard,
			Sender: pair.Sender, Receiver: pair.Receiver, ControlNumber: controlNumber, Number: number,
		})
		if err == nil {
			return nil
		}
		if !errors.Is(err, db.ErrNotFound) {
			return fmt.Errorf("record partner %s to %s: %w", pair.Sender, pair.Receiver, err)
		}
		p, err = lock(ctx, q, pair)
	}
	if err != nil {
		return fmt.Errorf("lock partner %s to %s: %w", pair.Sender, pair.Receiver, err)
	}
	r := run{start: p.RunStart, highest: p.Highest}
	if number != nil {
		if r, err = r.advance(ctx, q, pair, p.ID, *number, closedBefore); err != nil {
			return err
		}
	}
	if err := q.PartnerSeen(ctx, db.PartnerSeenParams{ID: p.ID, ControlNumber: controlNumber, RunStart: r.start, Highest: r.highest}); err != nil {
		return fmt.Errorf("update partner %d: %w", p.ID, err)
	}
	return nil
}

// lock reads pair's row and locks it until the transaction ends;
// db.ErrNotFound when the pair has none that this statement sees.
func lock(ctx context.Context, q *db.Queries, pair Pair) (db.PartnerLockRow, error) {
	return q.PartnerLock(ctx, db.PartnerLockParams{
		TenantID: pair.TenantID, EnvironmentID: pair.EnvironmentID, Standard: pair.Standard,
		Sender: pair.Sender, Receiver: pair.Receiver,
	})
}

// run is the first and highest number of a partner's current run; nil
// before its first numeric control number.
type run struct {
	start, highest *int64
}

// advance moves partner id's run on to number, opening and closing its
// gaps, and returns the run after it. The number closes its gap whichever
// run left it: after a restart, the numbers of the new run close the old
// run's gaps as they arrive. closedBefore counts the number's gaps a
// statement before this one closed.
func (r run) advance(ctx context.Context, q *db.Queries, pair Pair, id, number, closedBefore int64) (run, error) {
	closed, err := q.PartnerGapClose(ctx, pair.gap(number))
	if err != nil {
		return r, fmt.Errorf("close gap %d of partner %d: %w", number, id, err)
	}
	closed += closedBefore
	switch {
	case r.highest == nil:
		return run{start: &number, highest: &number}, nil
	case number > *r.highest+1:
		first, last := *r.highest+1, number-1
		if last-first+1 > MaxGapsPerJump {
			if err := q.PartnerJumped(ctx, db.PartnerJumpedParams{ID: id, JumpFrom: r.highest, JumpTo: &number}); err != nil {
				return r, fmt.Errorf("record the jump of partner %d: %w", id, err)
			}
		} else if err := q.PartnerGapsOpen(ctx, db.PartnerGapsOpenParams{PartnerID: id, First: first, Last: last}); err != nil {
			return r, fmt.Errorf("record the gaps of partner %d: %w", id, err)
		}
		return run{start: r.start, highest: &number}, nil
	case number > *r.highest:
		return run{start: r.start, highest: &number}, nil
	case closed == 0 && number == 1 && *r.start == 1 && *r.highest > 1:
		return run{start: &number, highest: &number}, nil
	}
	return r, nil
}

// sequenceNumber is a control number's place in its sender's sequence: the
// number it writes (ISA13 with its leading zeros, a numeric UNB 0020), or
// nil when it is not one.
func sequenceNumber(controlNumber string) *int64 {
	if controlNumber == "" || len(controlNumber) > 18 {
		return nil
	}
	for _, c := range controlNumber {
		if c < '0' || c > '9' {
			return nil
		}
	}
	n, err := strconv.ParseInt(controlNumber, 10, 64)
	if err != nil {
		return nil
	}
	return &n
}
