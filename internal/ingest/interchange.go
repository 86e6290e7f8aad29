package ingest

import (
	"bytes"
	"context"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/lefia/edihub/internal/apperr"
	"github.com/lefia/edihub/internal/auditevent"
	"github.com/lefia/edihub/internal/db"
	"github.com/lefia/edihub/internal/partner"
)

// Interchange is the envelope of the X12 or EDIFACT interchange whose
// messages a Batch carries. Its control number, per standard, sender and
// receiver, identifies it within Window: a repeat of the same segments is
// its duplicate, other segments under the same number are refused.
type Interchange struct {
	Standard, Sender, Receiver, ControlNumber string
	// ContentHash is the hash of the interchange's segments, leaving out
	// line breaks between them (edi.Interchange.ContentHash).
	ContentHash [32]byte
	Window      time.Duration
	// Acknowledge, when set, writes the acknowledgment of the interchange
	// under edihub's control number n; it is kept with the interchange and
	// sent again to its repeats.
	Acknowledge func(n int64) []byte
	// Reject, when set, writes the acknowledgment that rejects the
	// interchange because its control number was used for other content,
	// under edihub's control number n.
	Reject func(n int64) []byte
}

// RejectedError refuses an interchange, with the acknowledgment that says
// so to its sender (nil without Interchange.Reject).
type RejectedError struct {
	Err            *apperr.Error
	Acknowledgment []byte
}

func (e *RejectedError) Error() string { return e.Err.Error() }
func (e *RejectedError) Unwrap() error { return e.Err }

// InterchangeOutcome is what became of an interchange: the row that holds
// its control number, and whether this request repeated it.
type InterchangeOutcome struct {
	ID        int64
	Duplicate bool
	// Acknowledgment is the one written when the interchange was first
	// received, nil without Interchange.Acknowledge.
	Acknowledgment []byte
}

// receiveInterchange decides the messages of an interchange in one
// transaction: it claims the interchange's control number, which the
// unique index on interchanges grants to one request at a time, and then
// decides each message as a batch's; or, when the number is held within
// the window, replays the first answer for the same segments, recording
// one blocked duplicate per message, and refuses other segments.
func (s *Service) receiveInterchange(ctx context.Context, ic Interchange, ms []message) (BatchResult, error) {
	var out BatchResult
	_, err := s.storeTx(ctx, func(q *db.Queries) ([]Result, error) {
		// The claim is the transaction's first statement: sent as a batch,
		// it carries the BEGIN in its round trip.
		claimed, err := db.One(ctx, q, (*db.Queries).InterchangeClaim, db.InterchangeClaimParams{
			TenantID: ms[0].TenantID, EnvironmentID: ms[0].EnvironmentID, Standard: ic.Standard,
			Sender: ic.Sender, Receiver: ic.Receiver, ControlNumber: ic.ControlNumber,
			ContentHash: ic.ContentHash[:], WindowSeconds: ic.Window.Seconds(),
		})
		if errors.Is(err, db.ErrNotFound) {
			out, err = replayInterchange(ctx, q, ic, ms)
			return nil, err
		}
		if err != nil {
			return nil, fmt.Errorf("claim interchange control number %s: %w", ic.ControlNumber, err)
		}
		id := claimed.ID
		var results []Result
		if allByFingerprint(ms) {
			results, err = receiveAllByFingerprint(ctx, q, claimLocks(ms), ms)
		} else {
			results, err = s.decideMixed(ctx, q, ms)
		}
		if err != nil {
			return nil, err
		}
		body := batchBody(ms, results)
		var ack []byte
		var kept *string
		if ic.Acknowledge != nil {
			ack = ic.Acknowledge(claimed.AcknowledgmentNumber)
			kept = new(string(ack))
		}
		// The answer kept and the partner's sequence travel in one round
		// trip. The sequence goes last, as it locks the pair's row: see
		// partner.Record.
		var b db.Batch
		var completeErr error
		if err := db.Queue(ctx, &b, db.Exec((*db.Queries).InterchangeComplete),
			db.InterchangeCompleteParams{ID: id, ResponseBody: body, Acknowledgment: kept}, new(struct{}), &completeErr); err != nil {
			return nil, fmt.Errorf("complete interchange %d: %w", id, err)
		}
		pair := partner.Pair{TenantID: ms[0].TenantID, EnvironmentID: ms[0].EnvironmentID, Standard: ic.Standard,
			Sender: ic.Sender, Receiver: ic.Receiver}
		recorded, err := partner.Queue(ctx, &b, pair, ic.ControlNumber)
		if err != nil {
			return nil, err
		}
		if err := b.Send(ctx, q); err != nil {
			return nil, fmt.Errorf("complete interchange %d: %w", id, err)
		}
		if completeErr != nil {
			return nil, fmt.Errorf("complete interchange %d: %w", id, completeErr)
		}
		if err := recorded.Finish(ctx, q); err != nil {
			return nil, err
		}
		out = BatchResult{Results: results, Body: body, Interchange: InterchangeOutcome{ID: id, Acknowledgment: ack}}
		return results, nil
	})
	if err != nil {
		return BatchResult{}, err
	}
	for i := range out.Results {
		out.Results[i].MessageType = ms[i].MessageType.Code
	}
	return out, nil
}

// replayInterchange answers a repeat of the interchange that holds ic's
// control number, in q's transaction.
func replayInterchange(ctx context.Context, q *db.Queries, ic Interchange, ms []message) (BatchResult, error) {
	row, err := q.InterchangeFind(ctx, db.InterchangeFindParams{
		TenantID: ms[0].TenantID, EnvironmentID: ms[0].EnvironmentID, Standard: ic.Standard,
		Sender: ic.Sender, Receiver: ic.Receiver, ControlNumber: ic.ControlNumber,
	})
	if err != nil {
		return BatchResult{}, fmt.Errorf("find interchange control number %s: %w", ic.ControlNumber, err)
	}
	if !bytes.Equal(row.ContentHash, ic.ContentHash[:]) {
		refused := &RejectedError{Err: apperr.New(apperr.Unprocessable, "interchange-control-number-reused",
			"the interchange control number %s from %s to %s was used on %s for an interchange with other content; "+
				"a new interchange needs a new control number", ic.ControlNumber, ic.Sender, ic.Receiver,
			row.ReceivedAt.UTC().Format(time.RFC3339))}
		if ic.Reject != nil {
			// A sequence's number outlives the transaction's rollback.
			n, err := q.InterchangeAcknowledgmentNumber(ctx)
			if err != nil {
				return BatchResult{}, fmt.Errorf("number the rejection of interchange %s: %w", ic.ControlNumber, err)
			}
			refused.Acknowledgment = ic.Reject(n)
		}
		return BatchResult{}, refused
	}
	p := db.InterchangeBlockedEventsParams{
		TenantID: &ms[0].TenantID, EnvironmentID: &ms[0].EnvironmentID, ID: row.ID,
		Action: auditevent.DuplicateBlocked, Actor: ms[0].Source.Actor, MatchKey: &ic.ControlNumber,
		Details: make([][]byte, len(ms)), ContentHashes: make([][]byte, len(ms)), MessageTypeIds: make([]int64, len(ms)),
	}
	for i, m := range ms {
		d := auditevent.BlockedDetails{
			Mode: auditevent.ModeInterchange,
			Interchange: &auditevent.InterchangeDetail{
				Standard: ic.Standard, Sender: ic.Sender, Receiver: ic.Receiver, ControlNumber: ic.ControlNumber,
			},
			Blocked: auditevent.BlockedCopy{Docnum: m.docnumOrNull, ContentHash: hex.EncodeToString(m.contentHash[:])},
			Source:  sourceDetail(m),
		}
		if p.Details[i], err = json.Marshal(d); err != nil {
			return BatchResult{}, fmt.Errorf("encode audit details: %w", err)
		}
		p.ContentHashes[i], p.MessageTypeIds[i] = m.contentHash[:], m.MessageType.ID
	}
	if _, err := q.InterchangeBlockedEvents(ctx, p); err != nil {
		return BatchResult{}, fmt.Errorf("record the duplicates of interchange %d: %w", row.ID, err)
	}
	var first struct {
		Messages []struct {
			ID int64 `json:"id"`
		} `json:"messages"`
	}
	if err := json.Unmarshal(row.ResponseBody, &first); err != nil {
		return BatchResult{}, fmt.Errorf("read the answer of interchange %d: %w", row.ID, err)
	}
	results := make([]Result, len(ms))
	for i := range results {
		results[i] = Result{Outcome: DuplicateInterchange}
		if i < len(first.Messages) {
			results[i].MessageID = first.Messages[i].ID
		}
	}
	var ack []byte
	if row.Acknowledgment != nil {
		ack = []byte(*row.Acknowledgment)
	}
	return BatchResult{Results: results, Replayed: true, Body: row.ResponseBody,
		Interchange: InterchangeOutcome{ID: row.ID, Duplicate: true, Acknowledgment: ack}}, nil
}
