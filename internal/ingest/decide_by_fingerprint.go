package ingest

import (
	"context"
	"fmt"
	"time"

	"github.com/google/uuid"

	"github.com/lefia/edihub/internal/auditevent"
	"github.com/lefia/edihub/internal/db"
)

// receiveByFingerprint stores m unless a message with the same fingerprint
// arrived within the window, as receiveAllByFingerprint decides a request
// of one message. A message without a fingerprint is simply stored.
func receiveByFingerprint(ctx context.Context, q *db.Queries, m message) (Result, error) {
	if m.fingerprint == nil {
		row, err := q.MessageInsert(ctx, insertParams(m))
		if err != nil {
			return Result{}, fmt.Errorf("store message: %w", err)
		}
		return created(m, row.ID, row.ReceivedAt), nil
	}
	results, err := receiveAllByFingerprint(ctx, q, noLocks, []message{m})
	if err != nil {
		return Result{}, err
	}
	return results[0], nil
}

// storeOrBlockOne decides m, which has a fingerprint, alone. The insert
// itself is the check: the partial unique index uq_messages_fingerprint
// lets exactly one of any number of concurrent inserts through, and the
// same statement then finds the holder and records the blocked duplicate
// (MessageStoreOrBlock); the deliveries of a stored message are written in
// the same round trip (DeliveryCreateForStored). It runs in the caller's
// transaction (storeTx), which commits before an answer is given.
func storeOrBlockOne(ctx context.Context, q *db.Queries, m message) (Result, error) {
	for range maxAttempts {
		var (
			b        db.Batch
			row      db.MessageStoreOrBlockRow
			storeErr error
		)
		if err := db.Queue(ctx, &b, (*db.Queries).MessageStoreOrBlock, storeOrBlockParams(m), &row, &storeErr); err != nil {
			return Result{}, fmt.Errorf("store message: %w", err)
		}
		deliveries, err := queueDeliveries(ctx, &b, []message{m})
		if err != nil {
			return Result{}, err
		}
		if err := b.Send(ctx, q); err != nil {
			return Result{}, fmt.Errorf("store message: %w", err)
		}
		if storeErr != nil {
			return Result{}, fmt.Errorf("store message: %w", storeErr)
		}
		rows := []storedRow{{MessageStoreOrBlockRow: row}}
		if err := deliveries.attach(rows); err != nil {
			return Result{}, err
		}
		res, again, err := decided(ctx, q, m, row)
		if !again {
			return withDeliveries(res, rows[0]), err
		}
	}
	return Result{}, fmt.Errorf("store message: fingerprint still contended after %d attempts", maxAttempts)
}

// pendingDeliveries is DeliveryCreateForStored queued in a batch behind
// the statement that stores messages: once the batch is sent, the
// deliveries it wrote and its error.
type pendingDeliveries struct {
	written []db.DeliveryCreateForStoredRow
	err     error
}

// queueDeliveries queues in b, behind the statement that stores ms, the
// statement that writes the deliveries of those it stores.
func queueDeliveries(ctx context.Context, b *db.Batch, ms []message) (*pendingDeliveries, error) {
	d := &pendingDeliveries{}
	if err := db.Queue(ctx, b, (*db.Queries).DeliveryCreateForStored, claimsOf(ms), &d.written, &d.err); err != nil {
		return nil, fmt.Errorf("write deliveries: %w", err)
	}
	return d, nil
}

// attach gives each row that stored a message the deliveries written for
// it, once the batch was sent.
func (d *pendingDeliveries) attach(rows []storedRow) error {
	if d.err != nil {
		return fmt.Errorf("write deliveries: %w", d.err)
	}
	if len(d.written) == 0 {
		return nil
	}
	stored := make(map[int64]int, len(rows))
	for i, r := range rows {
		if r.InsertedID != nil {
			stored[*r.InsertedID] = i
		}
	}
	for _, w := range d.written {
		i, ok := stored[w.MessageID]
		if !ok {
			// A delivery whose job would never be queued: refuse the
			// transaction rather than commit it.
			return fmt.Errorf("write deliveries: delivery %d is of message %d, which this statement did not store", w.ID, w.MessageID)
		}
		rows[i].deliveries = append(rows[i].deliveries, w)
	}
	return nil
}

// withDeliveries is res, decided from row, with the deliveries written for
// it when it is a new message.
func withDeliveries(res Result, row storedRow) Result {
	if res.Outcome == Created {
		return res.withWrittenDeliveries(row.deliveries)
	}
	return res
}

// receiveAllByFingerprintTx decides every message of one request, or of
// one group of single requests (groupcommit.go), each of which has a
// fingerprint, as receiveAllByFingerprint does in a transaction of their
// own (storeTx). When every one of them is most likely a retransmission
// (allSeen), blockRetransmissions first asks whether they all are, with
// its statement in a transaction of its own, BEGIN and COMMIT in its one
// round trip, as a replay's is (Service.ownTx). It writes nothing
// unless it blocks them all, so when it does not, the transaction decides
// them as if it had not run.
func (s *Service) receiveAllByFingerprintTx(ctx context.Context, locks db.MessageClaimLocksParams, ms []message) ([]Result, error) {
	if results, ok, err := blockRetransmissions(ctx, s.ownTx, ms); ok || err != nil {
		return results, err
	}
	return s.storeTx(ctx, func(q *db.Queries) ([]Result, error) {
		return receiveAllByFingerprint(ctx, q, locks, ms)
	})
}

// receiveAllByFingerprint decides every message of one request, or of one
// group of single requests (groupcommit.go), each of which has a
// fingerprint, in order, in the transaction q, after taking the advisory
// locks of their claims (claimLocks): the locks travel in the round trip of
// the first statement, ahead of it. It picks the statements by what the
// messages most likely are:
//   - new messages, when none was seen and no two share a claim: storeNew
//     stores them with a statement that only inserts, and leaves the ones
//     it finds taken (a changed copy, a retransmission the memo forgot, an
//     expired holder) to be decided after it;
//   - anything else, and what storeNew leaves: decideAll.
//
// Each path decides each message as decideAll would. Retransmissions are
// best blocked before the transaction begins (receiveAllByFingerprintTx).
func receiveAllByFingerprint(ctx context.Context, q *db.Queries, locks db.MessageClaimLocksParams, ms []message) ([]Result, error) {
	if !allFresh(ms) {
		return decideAll(ctx, q, locks, ms)
	}
	results, taken, err := storeNew(ctx, q, locks, ms)
	if err != nil || len(taken) == 0 {
		return results, err
	}
	rest := make([]message, len(taken))
	for j, i := range taken {
		rest[j] = ms[i]
	}
	// storeNew took every claim's lock, so the rest go without.
	decidedRest, err := decideAll(ctx, q, noLocks, rest)
	if err != nil {
		return nil, err
	}
	for j, i := range taken {
		results[i] = decidedRest[j]
	}
	return results, nil
}

// decideAll stores each of ms unless a message with the same fingerprint
// arrived within the window. One statement (MessageStoreOrBlockAll) decides
// up to statementBytes of them, so that a packet or batch of 100 costs one
// statement and one round trip instead of 100, with the decisions one
// message at a time would make: a message repeating an earlier one is
// blocked as its duplicate. A message that must be decided again (see
// decided) changed nothing, so deciding it alone afterwards decides it as
// if it had come alone; only when a concurrent request releases an expired
// holder in between can a later message of the request take the
// fingerprint first, and then the earlier one is blocked as its duplicate:
// one of the two is stored either way.
//
// A message decided alone (a single request, a group of one, a batch of
// one, a message decided again) keeps MessageStoreOrBlock, the same
// decision for one row (storeOrBlockOne): the set-based statement's extra
// steps (the arrays, the repeats, the event ids) cost one message more
// than they save (docs/performance.md, "One statement per batch or
// packet"). Nor does it take a lock: a transaction that claims one
// fingerprint holds no claim another could wait for while it waits, so it
// cannot deadlock.
func decideAll(ctx context.Context, q *db.Queries, locks db.MessageClaimLocksParams, ms []message) ([]Result, error) {
	for i := range ms {
		if ms[i].blocked == nil {
			if err := ms[i].encodeProvenance(); err != nil {
				return nil, err
			}
		}
	}
	if len(ms) == 1 {
		res, err := storeOrBlockOne(ctx, q, ms[0])
		return []Result{res}, err
	}
	rows, err := storeOrBlock(ctx, q, locks, ms)
	if err != nil {
		return nil, err
	}
	results := make([]Result, len(ms))
	for i, m := range ms {
		res, again, err := decided(ctx, q, m, rows[i].MessageStoreOrBlockRow)
		if again {
			res, err = storeOrBlockOne(ctx, q, m)
		} else {
			res = withDeliveries(res, rows[i])
		}
		if err != nil {
			return nil, err
		}
		results[i] = res
	}
	return results, nil
}

// claim is what a message with a fingerprint claims: the fingerprint in its
// tenant and environment, which uq_messages_fingerprint keeps unique.
type claim struct {
	tenant, environment int64
	fingerprint         string
}

func claimOfFingerprint(m message) claim {
	return claim{m.TenantID, m.EnvironmentID, *m.fingerprint}
}

// allFresh tells whether ms are most likely all new messages: the tenant
// sent none of their bytes lately with their fingerprints (message.seen),
// and no two of them claim the same fingerprint, so that none of them can
// be the duplicate of another. Only then is storeNew worth its statement.
func allFresh(ms []message) bool {
	for _, m := range ms {
		if m.seen {
			return false
		}
	}
	if len(ms) == 1 {
		return true // a single request, most of them: no claim to repeat
	}
	claims := make(map[claim]struct{}, len(ms))
	for _, m := range ms {
		c := claimOfFingerprint(m)
		if _, repeated := claims[c]; repeated {
			return false
		}
		claims[c] = struct{}{}
	}
	return true
}

// storeNew stores those of ms (each of which claims a fingerprint no other
// of them claims) whose fingerprint no other message holds, with their
// deliveries, by one MessageStoreNew statement: an insert, with neither the
// lookup of a holder nor the three other inserts a blocked message needs,
// which MessageStoreOrBlockAll starts every time. The statement travels
// behind locks, when there are any, in one round trip. taken lists, in
// order, the indexes of the messages it left as they were, whose results
// it leaves empty; every other result is the message's, stored with its
// deliveries.
func storeNew(ctx context.Context, q *db.Queries, locks db.MessageClaimLocksParams, ms []message) (results []Result, taken []int, err error) {
	var (
		b                 db.Batch
		stored            []db.MessageStoreNewRow
		lockErr, storeErr error
	)
	if err := queueClaimLocks(ctx, &b, locks, &lockErr); err != nil {
		return nil, nil, err
	}
	if err := db.Queue(ctx, &b, (*db.Queries).MessageStoreNew, storeNewParams(ms), &stored, &storeErr); err != nil {
		return nil, nil, fmt.Errorf("store messages: %w", err)
	}
	if err := b.Send(ctx, q); err != nil {
		return nil, nil, fmt.Errorf("store messages: %w", err)
	}
	switch {
	case lockErr != nil:
		return nil, nil, fmt.Errorf("lock the claims: %w", lockErr)
	case storeErr != nil:
		return nil, nil, fmt.Errorf("store messages: %w", storeErr)
	}
	results, err = storedResults(ms, stored)
	if err != nil {
		return nil, nil, err
	}
	for i := range results {
		if results[i].MessageID == 0 {
			taken = append(taken, i)
		}
	}
	return results, taken, nil
}

// storedResults are the results of ms whose rows MessageStoreNew returned
// (stored, one row per delivery, a message's rows one after the other), in
// the places of the messages their claims name; the others are left empty.
func storedResults(ms []message, stored []db.MessageStoreNewRow) ([]Result, error) {
	places := make(map[claim]int, len(ms))
	for i, m := range ms {
		places[claimOfFingerprint(m)] = i
	}
	results := make([]Result, len(ms))
	var written []db.DeliveryCreateForStoredRow
	for k, s := range stored {
		i, ok := places[claim{s.TenantID, s.EnvironmentID, s.Fingerprint}]
		first := k == 0 || stored[k-1].ID != s.ID
		if !ok || (first && results[i].MessageID != 0) || (s.DeliveryID == nil) != (s.DestinationID == nil) {
			return nil, fmt.Errorf("store messages: the answer's row for message %d fits none of the %d messages sent", s.ID, len(ms))
		}
		if s.DeliveryID != nil {
			written = append(written, db.DeliveryCreateForStoredRow{ID: *s.DeliveryID, DestinationID: *s.DestinationID, MessageID: s.ID})
		}
		if k+1 < len(stored) && stored[k+1].ID == s.ID {
			continue // more deliveries of this message follow
		}
		results[i], written = created(ms[i], s.ID, s.ReceivedAt).withWrittenDeliveries(written), nil
	}
	return results, nil
}

// blockRetransmissions decides ms, which all have a fingerprint, as
// blocked duplicates of the messages holding their fingerprints, when each
// is a retransmission: the tenant sent its bytes lately (seen), and
// MessageBlockRetransmissions finds every one held, inside its window, by
// a message of the same content or shape. Then it records their audit
// events without sending their payloads, and ok is true. Otherwise it
// changes nothing and ok is false, and the caller decides ms as if it had
// not run; when any of ms was not seen, it does not even ask.
func blockRetransmissions(ctx context.Context, q *db.Queries, ms []message) (results []Result, ok bool, err error) {
	if !allSeen(ms) {
		return nil, false, nil
	}
	n := len(ms)
	p := db.MessageBlockRetransmissionsParams{
		TenantIds: make([]int64, n), EnvironmentIds: make([]int64, n), MessageTypeIds: make([]int64, n),
		ContentHashes: make([][]byte, n), ShapeHashes: make([][]byte, n), Fingerprints: make([]string, n),
		Actors: make([]string, n), WindowHours: make([]int32, n), Details: make([][]byte, n),
		Action: auditevent.DuplicateBlocked,
	}
	for i, m := range ms {
		p.TenantIds[i], p.EnvironmentIds[i], p.MessageTypeIds[i] = m.TenantID, m.EnvironmentID, m.MessageType.ID
		p.ContentHashes[i], p.ShapeHashes[i], p.Fingerprints[i] = m.contentHash[:], m.shapeHash[:], *m.fingerprint
		p.Actors[i], p.WindowHours[i], p.Details[i] = m.Source.Actor, m.windowHours, m.blocked
	}
	rows, err := db.One(ctx, q, (*db.Queries).MessageBlockRetransmissions, p)
	switch {
	case err != nil:
		return nil, false, fmt.Errorf("block retransmissions: %w", err)
	case len(rows) == 0:
		return nil, false, nil
	case len(rows) != len(ms):
		return nil, false, fmt.Errorf("block retransmissions: %d answers for %d messages", len(rows), len(ms))
	}
	results = make([]Result, len(ms))
	for i, r := range rows {
		results[i] = duplicateOf(ms[i], r.HolderID, r.HolderDocnum, r.HolderReceivedAt)
	}
	return results, true, nil
}

// allSeen tells whether the tenant sent each of ms's bytes lately with its
// fingerprint (message.seen): only then is the request worth asking
// MessageBlockRetransmissions about.
func allSeen(ms []message) bool {
	for _, m := range ms {
		if !m.seen {
			return false
		}
	}
	return true
}

// storedRow is MessageStoreOrBlockAll's answer for one message with the
// deliveries written for it, if it was stored, in the same round trip.
type storedRow struct {
	db.MessageStoreOrBlockRow
	deliveries []db.DeliveryCreateForStoredRow
}

// statementBytes bounds the payload bytes of one MessageStoreOrBlockAll
// statement: pgx holds a statement's arguments, encoded, until it is sent,
// twice over, so a 10 MiB packet in one statement would hold 20 MiB more.
// A batch of a hundred 2 KiB messages still goes in one.
const statementBytes = 1 << 20

// storeOrBlock takes locks, then decides ms with one
// MessageStoreOrBlockAll statement for each run of up to statementBytes of
// payload, in order; each statement sees what the earlier ones stored.
func storeOrBlock(ctx context.Context, q *db.Queries, locks db.MessageClaimLocksParams, ms []message) ([]storedRow, error) {
	rows := make([]storedRow, len(ms))
	for start := 0; start < len(ms); {
		end, size := start+1, ms[start].size()
		for end < len(ms) && size+ms[end].size() <= statementBytes {
			size += ms[end].size()
			end++
		}
		if err := storeOrBlockAll(ctx, q, locks, ms[start:end], rows[start:end]); err != nil {
			return nil, err
		}
		start, locks = end, noLocks
	}
	return rows, nil
}

// storeOrBlockAll decides all of ms with one MessageStoreOrBlockAll
// statement and puts the answers in rows, in order. The statement travels
// in one round trip (db.Batch) behind locks, when there are any, and ahead
// of DeliveryCreateForStored, which writes the deliveries of the messages
// it stored: each statement runs in the same transaction, and sees the
// same, as it would sent alone.
func storeOrBlockAll(ctx context.Context, q *db.Queries, locks db.MessageClaimLocksParams, ms []message, rows []storedRow) error {
	var (
		b                 db.Batch
		answers           []db.MessageStoreOrBlockAllRow
		lockErr, storeErr error
	)
	if err := queueClaimLocks(ctx, &b, locks, &lockErr); err != nil {
		return err
	}
	if err := db.Queue(ctx, &b, (*db.Queries).MessageStoreOrBlockAll, storeOrBlockAllParams(ms), &answers, &storeErr); err != nil {
		return fmt.Errorf("store messages: %w", err)
	}
	deliveries, err := queueDeliveries(ctx, &b, ms)
	if err != nil {
		return err
	}
	if err := b.Send(ctx, q); err != nil {
		return fmt.Errorf("store messages: %w", err)
	}
	switch {
	case lockErr != nil:
		return fmt.Errorf("lock the claims: %w", lockErr)
	case storeErr != nil:
		return fmt.Errorf("store messages: %w", storeErr)
	case len(answers) != len(ms):
		return fmt.Errorf("store messages: %d answers for %d messages", len(answers), len(ms))
	}
	for i, a := range answers {
		rows[i].MessageStoreOrBlockRow = db.MessageStoreOrBlockRow(a)
	}
	return deliveries.attach(rows)
}

// queueClaimLocks queues in b, ahead of the statements that make the
// claims, the statement that takes locks (MessageClaimLocks), when there
// are any; once b is sent, *lockErr is its error.
func queueClaimLocks(ctx context.Context, b *db.Batch, locks db.MessageClaimLocksParams, lockErr *error) error {
	if len(locks.ClaimLocks) == 0 {
		return nil
	}
	if err := db.Queue(ctx, b, db.Exec((*db.Queries).MessageClaimLocks), locks, new(struct{}), lockErr); err != nil {
		return fmt.Errorf("lock the claims: %w", err)
	}
	return nil
}

// claimsOf names the fingerprint claims of ms, which all have one, for
// DeliveryCreateForStored.
func claimsOf(ms []message) db.DeliveryCreateForStoredParams {
	p := db.DeliveryCreateForStoredParams{
		TenantIds: make([]int64, len(ms)), EnvironmentIds: make([]int64, len(ms)), Fingerprints: make([]string, len(ms)),
	}
	for i, m := range ms {
		p.TenantIds[i], p.EnvironmentIds[i], p.Fingerprints[i] = m.TenantID, m.EnvironmentID, *m.fingerprint
	}
	return p
}

// storeNewParams lays ms out as MessageStoreNew's arrays: their columns,
// and their keys beyond the first, each named by its message's claim.
func storeNewParams(ms []message) db.MessageStoreNewParams {
	p := messageColumns(ms)
	for _, m := range ms {
		for _, v := range m.laterKeyValues() {
			p.KeyTenantIds = append(p.KeyTenantIds, m.TenantID)
			p.KeyEnvironmentIds = append(p.KeyEnvironmentIds, m.EnvironmentID)
			p.KeyFingerprints = append(p.KeyFingerprints, *m.fingerprint)
			p.KeyValues = append(p.KeyValues, v)
		}
	}
	return p
}

// messageColumns lays out the columns of ms, one element per message and
// with the values that stand for NULL, as MessageStoreNew and
// MessageStoreOrBlockAll take them; each statement names the keys beyond
// the first in its own way.
func messageColumns(ms []message) db.MessageStoreNewParams {
	n := len(ms)
	p := db.MessageStoreNewParams{
		TenantIds: make([]int64, n), EnvironmentIds: make([]int64, n), MessageTypeIds: make([]int64, n),
		Docnums: make([]string, n), Payloads: make([][]byte, n), ContentHashes: make([][]byte, n),
		ShapeHashes: make([][]byte, n), Fingerprints: make([]string, n), SourceEndpoints: make([]string, n),
		IntegrationIds: make([]uuid.UUID, n), RemoteAddrs: make([]string, n), ContentTypes: make([]string, n),
		ReceivedBytes: make([][]byte, n), EdiFrames: make([][]byte, n), PacketPositions: make([]int32, n), PacketSizes: make([]int32, n),
		FirstKeyValues: make([]string, n),
	}
	for i, m := range ms {
		p.TenantIds[i], p.EnvironmentIds[i], p.MessageTypeIds[i] = m.TenantID, m.EnvironmentID, m.MessageType.ID
		p.Docnums[i] = m.Docnum // "" when m has none, as docnumOrNull says
		p.Payloads[i], p.ContentHashes[i], p.ShapeHashes[i] = m.stored.payload, m.contentHash[:], m.shapeHash[:]
		p.Fingerprints[i], p.SourceEndpoints[i] = *m.fingerprint, m.Source.Endpoint
		if m.Source.IntegrationID != nil {
			p.IntegrationIds[i] = *m.Source.IntegrationID
		}
		p.RemoteAddrs[i] = m.Source.RemoteAddr
		p.ContentTypes[i], p.ReceivedBytes[i], p.EdiFrames[i] = m.stored.contentType, m.stored.bytes, m.stored.frame
		if m.stored.packetPosition != nil {
			p.PacketPositions[i], p.PacketSizes[i] = *m.stored.packetPosition, *m.stored.packetSize
		}
		if len(m.keyValues) > 0 { // the first in the message's row, the others in message_keys
			p.FirstKeyValues[i] = m.keyValues[0]
		}
	}
	return p
}

// laterKeyValues are m's business key values after the first, which
// message_keys holds (the first is in the message's row).
func (m message) laterKeyValues() []string {
	return m.keyValues[min(1, len(m.keyValues)):]
}

// storeOrBlockAllParams is MessageStoreOrBlockAll's arrays for ms: their
// columns, their keys beyond the first, and what blocking a message records
// (the event's actor and details, the window, the sender of a kept copy).
func storeOrBlockAllParams(ms []message) db.MessageStoreOrBlockAllParams {
	s, n := messageColumns(ms), len(ms)
	p := db.MessageStoreOrBlockAllParams{
		TenantIds: s.TenantIds, EnvironmentIds: s.EnvironmentIds, MessageTypeIds: s.MessageTypeIds,
		Docnums: s.Docnums, Payloads: s.Payloads, ContentHashes: s.ContentHashes, ShapeHashes: s.ShapeHashes,
		Fingerprints: s.Fingerprints, SourceEndpoints: s.SourceEndpoints, IntegrationIds: s.IntegrationIds,
		RemoteAddrs: s.RemoteAddrs, ContentTypes: s.ContentTypes, ReceivedBytes: s.ReceivedBytes, EdiFrames: s.EdiFrames,
		PacketPositions: s.PacketPositions, PacketSizes: s.PacketSizes,
		FirstKeyValues: s.FirstKeyValues,
		Actors:         make([]string, n), WindowHours: make([]int32, n), Details: make([][]byte, n), Senders: make([][]byte, n),
		Action: auditevent.DuplicateBlocked,
	}
	for i, m := range ms {
		p.Actors[i], p.WindowHours[i], p.Details[i], p.Senders[i] = m.Source.Actor, m.windowHours, m.blocked, m.sender
		for _, v := range m.laterKeyValues() { // a claim may repeat here: the keys name their message by its place
			p.KeyOrds = append(p.KeyOrds, int32(i+1))
			p.KeyValues = append(p.KeyValues, v)
		}
	}
	return p
}

// storeOrBlockParams is MessageStoreOrBlock's parameters for m.
func storeOrBlockParams(m message) db.MessageStoreOrBlockParams {
	return db.MessageStoreOrBlockParams{
		TenantID: m.TenantID, EnvironmentID: m.EnvironmentID, MessageTypeID: m.MessageType.ID,
		Docnum: m.docnumOrNull, Payload: m.stored.payload, ContentHash: m.contentHash[:], ShapeHash: m.shapeHash[:],
		Fingerprint: m.fingerprint, SourceEndpoint: m.Source.Endpoint, IntegrationID: m.Source.IntegrationID, RemoteAddr: m.Source.RemoteAddr,
		WindowHours: m.windowHours, Action: auditevent.DuplicateBlocked, Actor: m.Source.Actor, Details: m.blocked,
		Sender: m.sender, ContentType: m.stored.contentType, ReceivedBytes: m.stored.bytes, EdiFrame: m.stored.frame,
		PacketPosition: m.stored.packetPosition, PacketSize: m.stored.packetSize, KeyValues: m.keyValues,
	}
}

// decided reads MessageStoreOrBlock's (or MessageStoreOrBlockAll's) answer for m: stored, or blocked as
// a duplicate of the holder, or again when the statement must run again
// (having changed nothing).
func decided(ctx context.Context, q *db.Queries, m message, row db.MessageStoreOrBlockRow) (res Result, again bool, err error) {
	switch {
	case row.InsertedID != nil:
		return created(m, *row.InsertedID, *row.InsertedAt), false, nil
	case row.HolderID == nil:
		// The holder committed after the statement's snapshot, or
		// released its claim since: a fresh statement sees which.
		return Result{}, true, nil
	case !*row.WithinWindow:
		// The holder is too old to block m: it gives the claim up so
		// that m, retried, becomes the message later retransmissions
		// match. Should m then fail, the next retransmission is simply
		// stored as new, as it would have been anyway.
		if _, err := q.MessageReleaseFingerprint(ctx, db.MessageReleaseFingerprintParams{
			TenantID: m.TenantID, EnvironmentID: m.EnvironmentID, ID: *row.HolderID, Fingerprint: m.fingerprint,
		}); err != nil {
			return Result{}, false, fmt.Errorf("release expired fingerprint: %w", err)
		}
		return Result{}, true, nil
	}
	return duplicateOf(m, *row.HolderID, row.HolderDocnum, *row.HolderReceivedAt), false, nil
}

// duplicateOf is the answer to m, blocked as a duplicate of the message
// holderID, which has docnum and was received at receivedAt.
func duplicateOf(m message, holderID int64, docnum *string, receivedAt time.Time) Result {
	body := encode(Receipt{
		ID: holderID, Status: "duplicate", Duplicate: true, DuplicateOf: &holderID,
		MessageType: m.MessageType.Code, Docnum: docnum, Fingerprint: m.fingerprint,
		ReceivedAt: receivedAt.UTC(),
	})
	return Result{Outcome: DuplicateFingerprint, MessageID: holderID, Body: body}
}

func created(m message, id int64, receivedAt time.Time) Result {
	return Result{Outcome: Created, MessageID: id, Body: encode(m.receipt(id, receivedAt))}
}

// insertParams stores m without a fingerprint claim (MessageInsert): m has
// no fingerprint, or is stored under an Idempotency-Key that another message
// of its request claimed.
func insertParams(m message) db.MessageInsertParams {
	p := db.MessageInsertParams{
		TenantID: m.TenantID, EnvironmentID: m.EnvironmentID, MessageTypeID: m.MessageType.ID,
		Docnum: m.docnumOrNull, Payload: m.stored.payload, ContentHash: m.contentHash[:], ComputedFingerprint: m.fingerprint,
		SourceEndpoint: m.Source.Endpoint, IntegrationID: m.Source.IntegrationID, RemoteAddr: m.Source.RemoteAddr,
		ContentType: m.stored.contentType, ReceivedBytes: m.stored.bytes, EdiFrame: m.stored.frame,
		PacketPosition: m.stored.packetPosition, PacketSize: m.stored.packetSize, KeyValues: m.keyValues,
	}
	if m.IdempotencyKey != "" {
		p.IdempotencyKey = &m.IdempotencyKey
	}
	return p
}
