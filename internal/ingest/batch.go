package ingest

import (
	"context"
	"crypto/sha256"
	"fmt"
	"slices"
	"strconv"

	"github.com/lefia/edihub/internal/apperr"
	"github.com/lefia/edihub/internal/db"
)

// Batch is several messages received in one request (an IDoc packet or a
// JSON batch). They are decided together: in one transaction, in order,
// and all or none.
type Batch struct {
	Items []Request
	// IdempotencyKey, when set, names the whole request: every item is
	// stored under it without a fingerprint claim, and a repeat of the
	// request gets the first answer. Items then carry no key of their own.
	IdempotencyKey string
	// Interchange, when set, is the X12 or EDIFACT interchange the items
	// came in: its control number decides first (see receiveInterchange).
	// It goes without IdempotencyKey.
	Interchange *Interchange
	// Refused are the items the caller already found unacceptable (their
	// entries in Items are left out): the batch is refused, listing them
	// with whatever else is wrong with the others.
	Refused []ItemError
}

// BatchResult is what became of each item, and the answer to send.
type BatchResult struct {
	Results []Result
	// Replayed is true when the request repeated the Idempotency-Key of an
	// earlier one; Body is then that request's answer.
	Replayed bool
	Body     []byte // {"messages": [<each item's answer>]}
	// Interchange is what became of the batch's interchange, if it had one.
	Interchange InterchangeOutcome
}

// ItemError is why one item of a batch cannot be accepted.
type ItemError struct {
	Index int // 0 for the first item
	Err   *apperr.Error
}

// BatchError refuses a batch, listing every item that cannot be accepted.
type BatchError struct{ Items []ItemError }

func (e *BatchError) Error() string {
	return fmt.Sprintf("%d items of the batch cannot be accepted, the first (item %d): %s",
		len(e.Items), e.Items[0].Index, e.Items[0].Err.Detail)
}

// ReceiveBatch stores each of b's items unless it is a duplicate, in one
// transaction and in order, so that an item repeating an earlier one of
// the same batch is its duplicate. An item that cannot be accepted refuses
// the whole batch with a *BatchError, and nothing is stored.
func (s *Service) ReceiveBatch(ctx context.Context, b Batch) (BatchResult, error) {
	ms := make([]message, len(b.Items))
	refused := b.Refused
	already := make(map[int]bool, len(refused))
	for _, e := range refused {
		already[e.Index] = true
	}
	for i, req := range b.Items {
		if already[i] {
			continue
		}
		if b.IdempotencyKey != "" {
			req.IdempotencyKey, req.KeyScope = b.IdempotencyKey, ""
		}
		m, err := s.prepare(ctx, req)
		if ae, ok := apperr.As(err); ok {
			refused = append(refused, ItemError{Index: i, Err: ae})
			continue
		}
		if err != nil {
			return BatchResult{}, err
		}
		ms[i] = m
	}
	if refused != nil {
		slices.SortFunc(refused, func(a, b ItemError) int { return a.Index - b.Index })
		return BatchResult{}, &BatchError{Items: refused}
	}
	if b.Interchange != nil {
		return s.receiveInterchange(ctx, *b.Interchange, ms)
	}
	if b.IdempotencyKey != "" {
		return s.receiveBatchWithKey(ctx, ms)
	}

	var results []Result
	var err error
	if allByFingerprint(ms) {
		results, err = s.receiveAllByFingerprintTx(ctx, claimLocks(ms), ms)
	} else {
		results, err = s.storeTx(ctx, func(q *db.Queries) ([]Result, error) { return s.decideMixed(ctx, q, ms) })
	}
	for i := range results {
		results[i].MessageType = ms[i].MessageType.Code
	}
	if err != nil {
		return BatchResult{}, err
	}
	return BatchResult{Results: results, Body: batchBody(ms, results)}, nil
}

// decideMixed decides the messages of a batch of which some carry an
// Idempotency-Key or have no fingerprint, one after the other, in the
// batch's transaction q, after taking the advisory locks of all their
// claims.
func (s *Service) decideMixed(ctx context.Context, q *db.Queries, ms []message) ([]Result, error) {
	if err := q.MessageClaimLocks(ctx, claimLocks(ms)); err != nil {
		return nil, fmt.Errorf("lock the batch's claims: %w", err)
	}
	results := make([]Result, 0, len(ms))
	for _, m := range ms {
		var res Result
		var err error
		if m.IdempotencyKey != "" {
			res, err = s.decideWithKey(ctx, q, m)
		} else {
			res, err = receiveByFingerprint(ctx, q, m)
		}
		if err != nil {
			return nil, err
		}
		results = append(results, res)
	}
	return results, nil
}

// allByFingerprint tells whether every message of a request is decided by
// its fingerprint alone: none carries an Idempotency-Key, each has a key.
func allByFingerprint(ms []message) bool {
	for _, m := range ms {
		if m.IdempotencyKey != "" || m.fingerprint == nil {
			return false
		}
	}
	return true
}

// decideWithKey is receiveWithKey inside a batch's transaction: it replays
// the answer m's key got, or claims the key and stores m. A statement that
// found the key held by a transaction that has since committed is simply
// run again, and then sees it.
func (s *Service) decideWithKey(ctx context.Context, q *db.Queries, m message) (Result, error) {
	k := m.keyID()
	for range maxAttempts {
		res, replayed, err := replay(ctx, q, k, m.requestHash, []message{m})
		if err != nil || replayed {
			return res, err
		}
		res, err = s.claimAndStore(ctx, q, m, k)
		if err == errRetry {
			continue
		}
		if err != nil {
			return Result{}, err
		}
		return res, complete(ctx, q, k, res)
	}
	return Result{}, fmt.Errorf("claim idempotency key: still contended after %d attempts", maxAttempts)
}

// receiveBatchWithKey stores every item of a batch under the request's
// Idempotency-Key, or replays the answer the key first got. The key's
// request hash covers every item in order, and the key points at the first
// item's message; the others carry the key in their rows. A replay records
// one blocked duplicate per item, against the message that item stored,
// which the first answer names.
func (s *Service) receiveBatchWithKey(ctx context.Context, ms []message) (BatchResult, error) {
	first := ms[0]
	first.requestHash = batchRequestHash(ms)
	k := first.keyID()
	replayedAll := func(body []byte) BatchResult {
		results := make([]Result, len(ms))
		for i, m := range ms {
			results[i] = Result{Outcome: ReplayedKey, MessageType: m.MessageType.Code}
		}
		return BatchResult{Results: results, Replayed: true, Body: body}
	}
	for range maxAttempts {
		res, replayed, err := replay(ctx, s.ownTx, k, first.requestHash, ms)
		if err != nil || replayed {
			return replayedAll(res.Body), err
		}
		results, err := s.storeTx(ctx, func(q *db.Queries) ([]Result, error) {
			res, err := s.claimAndStore(ctx, q, first, k)
			if err != nil {
				return nil, err
			}
			res.MessageType = first.MessageType.Code
			results := append(make([]Result, 0, len(ms)), res)
			for _, m := range ms[1:] {
				if res, err = storeUnclaimed(ctx, q, m); err != nil {
					return nil, err
				}
				res.MessageType = m.MessageType.Code
				results = append(results, res)
			}
			return results, complete(ctx, q, k, Result{MessageID: results[0].MessageID, Body: batchBody(ms, results)})
		})
		if err == errRetry {
			continue
		}
		if err != nil {
			return BatchResult{}, err
		}
		return BatchResult{Results: results, Body: batchBody(ms, results)}, nil
	}
	return BatchResult{}, fmt.Errorf("claim idempotency key: still contended after %d attempts", maxAttempts)
}

// batchRequestHash is the request hash of a batch: of its items' request
// hashes, in order.
func batchRequestHash(ms []message) [32]byte {
	h := sha256.New()
	for _, m := range ms {
		h.Write(m.requestHash[:])
	}
	var sum [32]byte
	h.Sum(sum[:0])
	return sum
}

// storeUnclaimed stores m under its Idempotency-Key, which another message
// of the same request has claimed, without a fingerprint claim.
func storeUnclaimed(ctx context.Context, q *db.Queries, m message) (Result, error) {
	row, err := q.MessageInsert(ctx, insertParams(m))
	if err != nil {
		return Result{}, fmt.Errorf("store message: %w", err)
	}
	return created(m, row.ID, row.ReceivedAt), nil
}

// batchBody is the answer to a request of several messages: each item's
// receipt, in order, led by the item it answers (its position, 1 for the
// first, and the docnum it was sent with), since a duplicate's receipt
// names its original, whose docnum a retransmission may not share.
func batchBody(ms []message, results []Result) []byte {
	size := len(`{"messages":[]}`)
	for i, r := range results {
		size += len(`{"item":{"position":,"docnum":},`) + 7 + len(r.Body)
		if d := ms[i].docnumOrNull; d != nil {
			size += len(*d) + 2
		}
	}
	b := append(make([]byte, 0, size), `{"messages":[`...)
	for i, r := range results {
		if i > 0 {
			b = append(b, ',')
		}
		b = strconv.AppendInt(append(b, `{"item":{"position":`...), int64(i+1), 10)
		b = appendJSONStringOrNull(append(b, `,"docnum":`...), ms[i].docnumOrNull)
		b = append(append(b, "},"...), r.Body[1:]...)
	}
	return append(b, `]}`...)
}
