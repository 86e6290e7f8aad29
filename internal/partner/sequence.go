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
func Record(ctx context.Context, q *db.Queries, pair Pair, controlNumber string) error {
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
		if r, err = r.advance(ctx, q, p.ID, *number); err != nil {
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
// run's gaps as they arrive.
func (r run) advance(ctx context.Context, q *db.Queries, id, number int64) (run, error) {
	closed, err := q.PartnerGapClose(ctx, db.PartnerGapCloseParams{PartnerID: id, ControlNumber: number})
	if err != nil {
		return r, fmt.Errorf("close gap %d of partner %d: %w", number, id, err)
	}
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
