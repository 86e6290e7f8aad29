package ingest

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"runtime"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/lefia/edihub/internal/apperr"
	"github.com/lefia/edihub/internal/canon"
	"github.com/lefia/edihub/internal/db"
	"github.com/lefia/edihub/internal/keypath"
	"github.com/lefia/edihub/internal/messagetype"
)

// Service stores received messages.
type Service struct {
	pool *pgxpool.Pool
	// ownTx runs statements that decide everything they write by
	// themselves (replays, retransmissions) each in a transaction of its
	// own, in one round trip, on its generic plan (db.OwnTransactions).
	ownTx      *db.Queries
	keyTTL     time.Duration
	deliveries Deliveries
	// canonicalising admits one payload per core to canonicalisation. The
	// work is CPU-bound, so running more of it at once than there are cores
	// only interleaves it, while every run holds a buffer as large as its
	// payload: sixteen 5 MiB messages canonicalised side by side would hold
	// sixteen such buffers instead of two.
	canonicalising chan struct{}
	// hashes remembers the hashes of recent payloads (see hashMemo).
	hashes *hashMemo
	// groups commit single messages decided by fingerprint, and replays
	// of single messages' Idempotency-Keys, in shared transactions, each
	// kind with its own (see groupcommit.go); nil when that is turned off.
	groups *committers
	// confirm says whether a transaction's commit must be confirmed by a
	// synchronous standby before its answer is given (WithConfirmedCommits).
	confirm func() bool
}

// Deliveries writes the deliveries of new messages, in the transaction
// that stores them (delivery.Service): EnqueueTx writes them and queues
// their jobs; QueueWrittenTx queues the jobs of those that the statements
// storing the messages wrote themselves (DeliveryCreateForStored).
type Deliveries interface {
	EnqueueTx(ctx context.Context, tx pgx.Tx, messageIDs ...int64) (int, error)
	QueueWrittenTx(ctx context.Context, tx pgx.Tx, written []db.DeliveryCreateForStoredRow) (int, error)
}

// New returns a Service; keyTTL is how long an Idempotency-Key is kept, and
// deliveries writes the deliveries of every message it stores. Group
// commit is on, with DefaultGroupLanes lanes, unless an option says
// otherwise.
func New(pool *pgxpool.Pool, keyTTL time.Duration, deliveries Deliveries, opts ...Option) *Service {
	o := options{lanes: DefaultGroupLanes, observe: func(int, bool) {}, confirm: func() bool { return false }}
	for _, opt := range opts {
		opt(&o)
	}
	s := &Service{pool: pool, ownTx: db.On(db.OwnTransactions{Pool: pool, Confirm: o.confirm}), keyTTL: keyTTL, deliveries: deliveries,
		canonicalising: make(chan struct{}, runtime.GOMAXPROCS(0)), hashes: newHashMemo(hashMemoEntries), confirm: o.confirm}
	if o.lanes > 0 {
		s.groups = newCommitters(s, o.lanes, o.observe)
	}
	return s
}

// Option changes a default of New.
type Option func(*options)

type options struct {
	lanes   int
	observe func(size int, failed bool)
	confirm func() bool
}

// DefaultGroupLanes is how many group transactions of messages to store
// may be in flight at once by default: one, whose next group grows while
// it commits (docs/performance.md, "Lanes, by measurement", has the
// measurements behind it).
const DefaultGroupLanes = 1

// WithGroupLanes sets how many group transactions of messages to store
// may be in flight at once (replays and retransmissions keep one lane
// each, see committers); 0 turns group commit off, so that every single
// message has a transaction of its own.
func WithGroupLanes(lanes int) Option {
	return func(o *options) { o.lanes = lanes }
}

// WithGroupObserver has observe told of every group committed: its size,
// and whether its transaction failed, leaving each member to be decided
// alone.
func WithGroupObserver(observe func(size int, failed bool)) Option {
	return func(o *options) { o.observe = observe }
}

// WithConfirmedCommits has every transaction that decides a request
// confirm its commit, while confirm says so, by asking the primary in the
// COMMIT's round trip whether a synchronous standby has it
// (db.CommitConfirmed). A request whose commit is not confirmed fails
// with db.ErrCommitUnconfirmed: what it stored is on the primary alone,
// and sent again it is answered as the duplicate or replay of that, once
// a standby confirms again.
func WithConfirmedCommits(confirm func() bool) Option {
	return func(o *options) { o.confirm = confirm }
}

// ContentKeyPrefix starts the idempotency key of a request whose key is its
// content (see Request.KeyIsContent).
const ContentKeyPrefix = "sha256:"

// Endpoints a message can arrive through, as stored in messages.source_endpoint.
const (
	EndpointReceiveMessage  = "receive-message"
	EndpointReceiveMessages = "receive-messages"
	EndpointWebhook         = "webhook"
)

// Source says where a message came from, for the message row and the audit trail.
type Source struct {
	Endpoint      string
	IntegrationID *uuid.UUID
	RemoteAddr    string
	Actor         string // e.g. "api_key:12" or "integration:<id>"
	// Headers are the request headers that identify the sender (a fixed
	// list the server chooses; never credentials), kept with a blocked copy
	// whose content changed so that an admin can tell who sent it.
	Headers map[string]string
	// RequestID names the HTTP request, and Position (1 for the first) the
	// message's place in it when the request carried several (a packet or
	// a batch), so that the audit trail can tell which copy was blocked.
	RequestID string
	Position  int
}

// Request is one received message, already authenticated and parsed.
type Request struct {
	TenantID      int64
	EnvironmentID int64
	// MessageType is the type the sender named, as it is now (package
	// sender resolves it).
	MessageType messagetype.Type
	Docnum      string
	Payload     []byte // the raw payload JSON, stored as received
	// CanonicalPayload, when set, is Payload's RFC 8785 canonical form,
	// written by whoever made Payload (an IDoc's or an interchange's view):
	// the hashes are then taken from it, and Payload is not canonicalised
	// again.
	CanonicalPayload []byte
	// ShapeIsContent says that Payload's writer gives a document one shape
	// only, so that the shape hash is the content hash: an IDoc's view
	// holds no one-item array, and an interchange's view holds every
	// segment as an array of its occurrences, so two of either never
	// differ in shape alone (docs/content-comparison.md, "A view's shape").
	ShapeIsContent bool
	// IdempotencyKey, when set, replaces the fingerprint check. KeyScope
	// separates key namespaces within an environment: "" for keys sent to
	// receive-message, an integration id for that integration's keys.
	IdempotencyKey string
	KeyScope       string
	// KeyIsContent makes the key the digest of the payload's canonical form
	// (ContentKeyPrefix and the hex of messages.content_hash), kept for the
	// message type's duplicate window rather than IDEMPOTENCY_KEY_TTL: the
	// same content within the window is then a duplicate, whatever else the
	// request says. It is for senders whose only signed identity is the
	// content itself.
	KeyIsContent bool
	Source       Source
	// Received, when set, is the form the message arrived in where that is
	// not its JSON payload (IDoc-XML, X12, EDIFACT); Payload is then its
	// JSON view, which is not stored but rebuilt from Received when read
	// (package storedview).
	Received *Received
}

// Received is what a message arrived as when it did not arrive as JSON.
type Received struct {
	ContentType string // the request's Content-Type, as sent
	Bytes       []byte // stored byte for byte
	// Frame is, for a message of an X12 or EDIFACT interchange, what its
	// view is rebuilt from beside Bytes (edi.Message.Frame).
	Frame []byte
	// Position and Of place an IDoc within a packet of Of IDocs (1 is the
	// first); both are 0 for a document that holds one IDoc.
	Position, Of int
}

// Outcome is what happened to a request.
type Outcome string

const (
	Created              Outcome = "created"               // stored as a new message
	DuplicateFingerprint Outcome = "duplicate_fingerprint" // blocked: same fingerprint inside the window
	ReplayedKey          Outcome = "replayed_key"          // blocked: Idempotency-Key seen before
	DuplicateInterchange Outcome = "duplicate_interchange" // blocked: its interchange was received before
)

// Result is the outcome and the JSON body to answer with.
type Result struct {
	Outcome     Outcome
	MessageID   int64 // the stored message, or the original a duplicate matched
	MessageType string
	Body        []byte
	// deliveriesWritten says that the statements which stored a new
	// message also wrote its deliveries (deliveries, perhaps none: see
	// storeOrBlockAll), so that storeTx only queues their jobs.
	deliveriesWritten bool
	deliveries        []db.DeliveryCreateForStoredRow
}

// withWrittenDeliveries is res, a new message, marked as one whose
// deliveries (written, perhaps none) the statements that stored it wrote.
func (res Result) withWrittenDeliveries(written []db.DeliveryCreateForStoredRow) Result {
	res.deliveriesWritten, res.deliveries = true, written
	return res
}

// Receipt is the JSON body answering a request.
type Receipt struct {
	ID          int64     `json:"id"`
	Status      string    `json:"status"`
	Duplicate   bool      `json:"duplicate"`
	DuplicateOf *int64    `json:"duplicate_of,omitempty"`
	MessageType string    `json:"message_type"`
	Docnum      *string   `json:"docnum"`
	Fingerprint *string   `json:"fingerprint"`
	ReceivedAt  time.Time `json:"received_at"`
}

// message is what Receive works out before it touches the store.
type message struct {
	Request
	contentHash [32]byte
	// shapeHash is the hash of the payload's shape form (canon.ShapeHash),
	// which tells a copy that differs from its original only in how its
	// segments are wrapped from one whose content changed.
	shapeHash   [32]byte
	requestHash [32]byte // only with an Idempotency-Key
	fingerprint *string
	// keyValues are the business key values kept for the admin's search
	// (see keyValues), stored with the message by the statement that
	// stores it.
	keyValues    []string
	windowHours  int32
	docnumOrNull *string
	// blocked is the details object of the audit event written if this
	// message turns out to be a duplicate, less the parts that depend on the
	// original (see auditevent.BlockedDetails); set with sender by
	// encodeProvenance before any statement that may block the message.
	blocked []byte
	// sender is the blocked_copies.sender object kept if this message is
	// blocked by its fingerprint with changed content (see auditevent.Sender); only
	// fingerprint mode needs it.
	sender []byte
	stored storedForm
	// seen says that the tenant sent these payload bytes lately with this
	// fingerprint (the hash memo had them): most likely a retransmission,
	// which blockRetransmissions decides without sending the payload.
	seen bool
}

// size is the bytes of m that a statement storing it sends: its payload
// or the form it was received in.
func (m message) size() int { return len(m.stored.payload) + len(m.stored.bytes) + len(m.stored.frame) }

// storedForm is how a message is kept in its row: every statement that
// stores a message writes these columns. A message received as JSON is
// stored as its payload; one received in another form (see Received) as
// that form, without its view (payload NULL), which is three times an X12
// message's segments and cost PostgreSQL about a third of an interchange's
// time to store (docs/performance.md, "Views rebuilt, not stored").
type storedForm struct {
	payload                    []byte
	contentType                string
	bytes, frame               []byte
	packetPosition, packetSize *int32
}

// jsonContentType is the stored content type of a payload received as JSON.
const jsonContentType = "application/json"

func storedFormOf(req Request) storedForm {
	r := req.Received
	if r == nil {
		return storedForm{payload: req.Payload, contentType: jsonContentType}
	}
	f := storedForm{contentType: r.ContentType, bytes: r.Bytes, frame: r.Frame}
	if r.Of > 1 {
		position, size := int32(r.Position), int32(r.Of)
		f.packetPosition, f.packetSize = &position, &size
	}
	return f
}

// Receive stores req's message unless it is a duplicate, and returns the
// answer for the client. A returned error is either an *apperr.Error for
// the client or a database failure; either way nothing was stored.
//
// Each outcome costs as few round trips as its guarantees allow: the
// decision is one statement, in the transaction that also writes a new
// message's deliveries (storeTx); a replayed Idempotency-Key is one
// statement, in a group's transaction (groupcommit.go) or on its own.
func (s *Service) Receive(ctx context.Context, req Request) (Result, error) {
	m, err := s.prepare(ctx, req)
	if err != nil {
		return Result{}, err
	}
	var res Result
	if s.groups != nil && (m.IdempotencyKey != "" || m.fingerprint != nil) {
		res, err = s.groups.of(m).receive(ctx, m)
	} else {
		res, err = s.decideAlone(ctx, m)
	}
	res.MessageType = m.MessageType.Code
	return res, err
}

// decideAlone decides m as a single request does without group commit: by
// its Idempotency-Key (receiveWithKey), or else in a transaction of its
// own.
func (s *Service) decideAlone(ctx context.Context, m message) (Result, error) {
	if m.IdempotencyKey != "" {
		return s.receiveWithKey(ctx, m)
	}
	return s.receiveAlone(ctx, m)
}

// receiveAlone decides m, which carries no Idempotency-Key, in a
// transaction of its own.
func (s *Service) receiveAlone(ctx context.Context, m message) (Result, error) {
	if m.fingerprint == nil {
		return s.storeOneTx(ctx, func(q *db.Queries) (Result, error) { return receiveByFingerprint(ctx, q, m) })
	}
	results, err := s.receiveAllByFingerprintTx(ctx, noLocks, []message{m})
	if err != nil {
		return Result{}, err
	}
	return results[0], nil
}

// prepare loads the message type and does the CPU work (canonical form,
// hashes, fingerprint) before any statement holds a connection. The payload
// is canonicalised once, into a buffer that is reused by later requests, and
// both hashes are taken from that one canonical form.
func (s *Service) prepare(ctx context.Context, req Request) (message, error) {
	m := message{Request: req, stored: storedFormOf(req)}
	mt := req.MessageType
	m.windowHours = messagetype.WindowHours(mt.DuplicateWindowHours)

	fp, err := mt.Fingerprint.Compute(req.Docnum, req.Payload)
	if err != nil {
		return m, keyProblem(mt.Code, err)
	}
	if fp.Fingerprint != "" {
		m.fingerprint = &fp.Fingerprint
	}
	m.keyValues = keyValues(fp.Values)
	if req.Docnum != "" {
		m.docnumOrNull = &req.Docnum
	}
	if err := s.hash(ctx, &m); err != nil {
		return m, err
	}
	if m.seen || m.IdempotencyKey != "" {
		// Most likely a duplicate or a replay: its statement will record
		// the event, and encoding it here keeps that work out of the
		// transaction. A message that looks new is stored by a statement
		// that blocks nothing (storeNew); decideAll encodes the few that
		// turn out to be duplicates.
		err = m.encodeProvenance()
	}
	return m, err
}

// keyProblem is the answer when the fingerprint cannot be computed. The
// message is not stored: storing it without its key would let a duplicate
// through, and a shortened key could block a document that is not one. A
// path the key-path grammar refuses can only have been stored before the
// grammar existed (every save checks it); it is reported as such, so that
// the sender's 422 and the log name what an admin must fix in the editor.
func keyProblem(messageType string, err error) error {
	var refused *keypath.Error
	var limit *keypath.LimitError
	switch {
	case errors.As(err, &refused):
		return &apperr.Error{Kind: apperr.Unprocessable, Type: "key-path-refused", Detail: fmt.Sprintf(
			"message type %s has a duplicate_key_fields path the key-path rules refuse, so no message of it "+
				"can be deduplicated until an admin corrects it: %v", messageType, err)}
	case errors.As(err, &limit):
		return &apperr.Error{Kind: apperr.Unprocessable, Type: "key-value-too-large", Detail: fmt.Sprintf(
			"a duplicate_key_fields path of message type %s selects too much of this payload: %v", messageType, err)}
	default:
		return &apperr.Error{Kind: apperr.Invalid, Type: "invalid-payload",
			Detail: "the payload's duplicate key values cannot be read: " + err.Error()}
	}
}

// hash sets m's content hash and shape hash and, with an Idempotency-Key,
// its request hash: from the memo when the tenant received the same bytes
// lately, else from one canonical form of the payload. It sets seen when
// the memo's entry was left by a message with m's fingerprint, and leaves
// m's in it.
//
// An interchange's message, the one kind with a frame (Received.Frame), is
// hashed without the memo. Its view holds its interchange's envelope,
// control numbers and all, so its bytes come again only with the same
// interchange, which the interchange's claim answers whatever the memo
// says; and a view comes with its canonical form, whose hashes the memo
// could not spare. Looking each one up and adding it cost about 4 % of
// edihub's CPU for interchanges of 100, and its hundred entries a request
// pushed out those of the payloads that do come again (docs/performance.md,
// "An interchange's messages without the memo").
func (s *Service) hash(ctx context.Context, m *message) error {
	var content *[32]byte
	if m.CanonicalPayload != nil {
		content = new(sha256.Sum256(m.CanonicalPayload))
	}
	memoized := m.stored.frame == nil
	var key [32]byte
	var h payloadHashes
	remembered := false
	if memoized {
		if content != nil {
			key = contentMemoKey(m.TenantID, *content)
		} else {
			key = memoKey(m.TenantID, m.ShapeIsContent, m.Payload)
		}
		h, remembered = s.hashes.Get(key)
	}
	keyed := m.KeyIsContent || m.IdempotencyKey != ""
	if !remembered || (keyed && !h.covers(m.MessageType.Code, m.Docnum)) {
		var err error
		if h, err = s.canonicalHashes(ctx, m, keyed, content); err != nil {
			return err
		}
		remembered = false
	}
	fp := ""
	if m.fingerprint != nil {
		fp = *m.fingerprint
	}
	m.seen = remembered && fp != "" && h.fingerprint == fp
	if memoized && (!remembered || h.fingerprint != fp) {
		h.fingerprint = fp
		s.hashes.Add(key, h)
	}
	m.contentHash, m.shapeHash = h.content, h.shape
	if m.KeyIsContent {
		m.IdempotencyKey = ContentKeyPrefix + hex.EncodeToString(m.contentHash[:])
	}
	if keyed {
		m.requestHash = h.request
	}
	return nil
}

// canonicalHashes works out m's hashes from the canonical form of its
// payload, the request hash too when keyed: the one it was given
// (CanonicalPayload), whose content hash is content, else one made here,
// admitted by canonicalising.
func (s *Service) canonicalHashes(ctx context.Context, m *message, keyed bool, content *[32]byte) (payloadHashes, error) {
	canonical := m.CanonicalPayload
	var written *canon.Canonical
	if canonical == nil {
		select {
		case s.canonicalising <- struct{}{}:
		case <-ctx.Done():
			return payloadHashes{}, ctx.Err()
		}
		defer func() { <-s.canonicalising }()
		c, err := canon.Canonicalise(m.Payload)
		if err != nil {
			return payloadHashes{}, &apperr.Error{Kind: apperr.Invalid, Type: "invalid-payload",
				Detail: "the payload cannot be canonicalised: " + err.Error()}
		}
		defer c.Release()
		written, canonical = c, c.Bytes()
	}
	h := payloadHashes{}
	if content != nil {
		h.content = *content
	} else {
		h.content = sha256.Sum256(canonical)
	}
	switch {
	case m.ShapeIsContent:
		h.shape = h.content
	case written != nil:
		h.shape = written.ShapeHash(h.content)
	default:
		h.shape = canon.ShapeHash(canonical, h.content)
	}
	if keyed {
		h.requestType, h.requestDocnum, h.requested = m.MessageType.Code, m.Docnum, true
		h.request = canon.RequestHash(m.MessageType.Code, m.Docnum, canonical)
	}
	return h, nil
}

func (m message) receipt(id int64, receivedAt time.Time) Receipt {
	return Receipt{
		ID: id, Status: "accepted", MessageType: m.MessageType.Code,
		Docnum: m.docnumOrNull, Fingerprint: m.fingerprint, ReceivedAt: receivedAt.UTC(),
	}
}

// errRetry is returned inside a transaction step that lost a race in a way
// that a fresh attempt resolves (a holder released its claim meanwhile).
var errRetry = errors.New("retry")

// maxAttempts bounds retries after lost races; two suffice in practice.
const maxAttempts = 5

// storeTx runs decide, which stores the new messages of one request, in
// one transaction with the deliveries of every message it created. Every
// path that stores a message goes through here, so a message never commits
// without its deliveries, and a duplicate, which stores none, gets none.
// The deliveries of all of a request's new messages are written by one
// call, so a packet or batch costs no more round trips for them than a
// single message does; those of messages stored by their fingerprint were
// written in the round trip that stored them (storeNew, storeOrBlockOne,
// storeOrBlockAll), and only their jobs are queued here, which costs no
// round trip when there are none.
func (s *Service) storeTx(ctx context.Context, decide func(q *db.Queries) ([]Result, error)) ([]Result, error) {
	var results []Result
	err := db.WithPgxTx(ctx, db.PipelinedBegin{Pool: s.pool, Confirm: s.confirm()}, func(tx pgx.Tx) error {
		var err error
		if results, err = decide(db.On(tx)); err != nil {
			return err
		}
		var created []int64
		var written []db.DeliveryCreateForStoredRow
		for _, res := range results {
			switch {
			case res.Outcome != Created:
			case res.deliveriesWritten:
				written = append(written, res.deliveries...)
			default:
				created = append(created, res.MessageID)
			}
		}
		if _, err := s.deliveries.EnqueueTx(ctx, tx, created...); err != nil {
			return fmt.Errorf("write deliveries of %d new messages: %w", len(created), err)
		}
		if _, err := s.deliveries.QueueWrittenTx(ctx, tx, written); err != nil {
			return fmt.Errorf("queue %d deliveries: %w", len(written), err)
		}
		return nil
	})
	return results, err
}

// storeOneTx is storeTx for a request that stores at most one message.
func (s *Service) storeOneTx(ctx context.Context, decide func(q *db.Queries) (Result, error)) (Result, error) {
	results, err := s.storeTx(ctx, func(q *db.Queries) ([]Result, error) {
		res, err := decide(q)
		return []Result{res}, err
	})
	if err != nil {
		return Result{}, err
	}
	return results[0], nil
}
