// Package ingest decides, for each received message, whether it is new or a
// duplicate, and stores it exactly once. Deduplication is either by the
// client's Idempotency-Key or by the message type's fingerprint; in both
// modes a database unique index, not application code, settles races, and
// the decision, the message and its audit event commit in one transaction.
package ingest

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/lefia/edihub/internal/apperr"
	"github.com/lefia/edihub/internal/canon"
	"github.com/lefia/edihub/internal/db"
	"github.com/lefia/edihub/internal/fingerprint"
	"github.com/lefia/edihub/internal/messagetype"
)

// Service stores received messages.
type Service struct {
	pool   *pgxpool.Pool
	keyTTL time.Duration
}

// New returns a Service; keyTTL is how long an Idempotency-Key is kept.
func New(pool *pgxpool.Pool, keyTTL time.Duration) *Service {
	return &Service{pool: pool, keyTTL: keyTTL}
}

// Endpoints a message can arrive through, as stored in messages.source_endpoint.
const (
	EndpointReceiveMessage = "receive-message"
	EndpointWebhook        = "webhook"
)

// Source says where a message came from, for the message row and the audit trail.
type Source struct {
	Endpoint      string
	IntegrationID *uuid.UUID
	RemoteAddr    string
	Actor         string // e.g. "api_key:12" or "integration:<id>"
}

// Request is one received message, already authenticated and parsed.
type Request struct {
	TenantID      int64
	EnvironmentID int64
	// The message type, by code (receive-message) or by id (webhooks,
	// whose integration names it); a non-zero MessageTypeID wins.
	MessageTypeCode string
	MessageTypeID   int64
	Docnum          string
	Payload         []byte // the raw payload JSON, stored as received
	// IdempotencyKey, when set, replaces the fingerprint check. KeyScope
	// separates key namespaces within an environment: "" for keys clients
	// send, an integration id for that integration's delivery ids.
	IdempotencyKey string
	KeyScope       string
	Source         Source
}

// Outcome is what happened to a request.
type Outcome string

const (
	Created              Outcome = "created"               // stored as a new message
	DuplicateFingerprint Outcome = "duplicate_fingerprint" // blocked: same fingerprint inside the window
	ReplayedKey          Outcome = "replayed_key"          // blocked: Idempotency-Key seen before
)

// Result is the outcome and the JSON body to answer with.
type Result struct {
	Outcome   Outcome
	MessageID int64 // the stored message, or the original a duplicate matched
	Body      []byte
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
	messageType  db.MessageType
	canonical    []byte
	contentHash  [32]byte
	fingerprint  *string
	windowHours  int32
	docnumOrNull *string
}

// Receive stores req's message unless it is a duplicate, and returns the
// answer for the client. A returned error is either an *apperr.Error for
// the client or a database failure; either way nothing was stored.
func (s *Service) Receive(ctx context.Context, req Request) (Result, error) {
	m, err := s.prepare(ctx, req)
	if err != nil {
		return Result{}, err
	}
	var res Result
	err = db.WithTx(ctx, s.pool, func(q *db.Queries) error {
		var err error
		if req.IdempotencyKey != "" {
			res, err = s.receiveWithKey(ctx, q, m)
		} else {
			res, err = receiveByFingerprint(ctx, q, m)
		}
		return err
	})
	if err != nil {
		return Result{}, err
	}
	return res, nil
}

// prepare loads the message type and does the CPU work (canonical form,
// hashes, fingerprint) before a transaction holds a connection.
func (s *Service) prepare(ctx context.Context, req Request) (message, error) {
	m := message{Request: req}
	mt, err := s.loadMessageType(ctx, req)
	if err != nil {
		return m, err
	}
	m.messageType = mt
	m.windowHours = messagetype.WindowHours(mt.DuplicateWindowHours)

	m.canonical, err = canon.JSON(req.Payload)
	if err != nil {
		return m, &apperr.Error{Kind: apperr.Invalid, Type: "invalid-payload",
			Detail: "the payload cannot be canonicalised: " + err.Error()}
	}
	m.contentHash = sha256.Sum256(m.canonical)

	fields, err := messagetype.DecodeFields(mt.DuplicateKeyFields)
	if err != nil {
		return m, err
	}
	fp, err := fingerprint.Compute(fingerprint.Input{
		MessageTypeID: mt.ID, Paths: fields, Docnum: req.Docnum, Payload: req.Payload,
	})
	if err != nil {
		return m, &apperr.Error{Kind: apperr.Invalid, Type: "invalid-payload",
			Detail: "the payload's duplicate key values cannot be read: " + err.Error()}
	}
	if fp.Fingerprint != "" {
		m.fingerprint = &fp.Fingerprint
	}
	if req.Docnum != "" {
		m.docnumOrNull = &req.Docnum
	}
	return m, nil
}

func (s *Service) loadMessageType(ctx context.Context, req Request) (db.MessageType, error) {
	q := db.New(s.pool)
	var mt db.MessageType
	var err error
	if req.MessageTypeID != 0 {
		mt, err = q.MessageTypeGetByID(ctx, db.MessageTypeGetByIDParams{TenantID: req.TenantID, ID: req.MessageTypeID})
	} else {
		mt, err = q.MessageTypeGetByCode(ctx, db.MessageTypeGetByCodeParams{TenantID: req.TenantID, Code: req.MessageTypeCode})
	}
	if db.IsNotFound(err) && req.MessageTypeID != 0 {
		return mt, fmt.Errorf("integration's message type %d is missing", req.MessageTypeID)
	}
	if db.IsNotFound(err) {
		return mt, apperr.New(apperr.Unprocessable, "unknown-message-type",
			"message type %q is not configured for this tenant", req.MessageTypeCode)
	}
	if err != nil {
		return mt, fmt.Errorf("load message type: %w", err)
	}
	return mt, nil
}

// insert stores m. claim says whether the message takes part in fingerprint
// deduplication; it returns db.ErrNotFound when another message holds the
// fingerprint.
func insert(ctx context.Context, q *db.Queries, m message, claim bool) (db.MessageInsertRow, error) {
	params := db.MessageInsertParams{
		TenantID:            m.TenantID,
		EnvironmentID:       m.EnvironmentID,
		MessageTypeID:       m.messageType.ID,
		Docnum:              m.docnumOrNull,
		Payload:             m.Payload,
		ContentHash:         m.contentHash[:],
		ComputedFingerprint: m.fingerprint,
		SourceEndpoint:      m.Source.Endpoint,
		IntegrationID:       m.Source.IntegrationID,
		RemoteAddr:          m.Source.RemoteAddr,
	}
	if claim {
		params.Fingerprint = m.fingerprint
	}
	if m.IdempotencyKey != "" {
		params.IdempotencyKey = &m.IdempotencyKey
	}
	return q.MessageInsert(ctx, params)
}

func (m message) receipt(row db.MessageInsertRow) Receipt {
	return Receipt{
		ID: row.ID, Status: "accepted", MessageType: m.messageType.Code,
		Docnum: m.docnumOrNull, Fingerprint: m.fingerprint, ReceivedAt: row.ReceivedAt.UTC(),
	}
}

func encode(r Receipt) ([]byte, error) {
	body, err := json.Marshal(r)
	if err != nil {
		return nil, fmt.Errorf("encode receipt: %w", err)
	}
	return body, nil
}

// errRetry is returned inside a transaction step that lost a race in a way
// that a fresh attempt resolves (a holder released its claim meanwhile).
var errRetry = errors.New("retry")

// maxAttempts bounds retries after lost races; two suffice in practice.
const maxAttempts = 5
