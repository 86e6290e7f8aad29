package ingest

import (
	"encoding/hex"
	"encoding/json"
	"fmt"
)

// ActionDuplicateBlocked is the audit action of every blocked duplicate.
const ActionDuplicateBlocked = "message.duplicate_blocked"

// The two ways a duplicate is recognised, as recorded in audit details.
const (
	ModeIdempotencyKey = "idempotency_key"
	ModeFingerprint    = "fingerprint"
)

// What a blocked copy's content is, compared with its original's, as
// recorded in audit details (MessageStoreOrBlock and IdempotencyKeyReplay
// write these words).
const (
	ContentIdentical = "identical"
	ContentChanged   = "changed"
)

// BlockedDetails is the details object of a message.duplicate_blocked event.
//
// The event is written by the same statement that finds the original
// (MessageStoreOrBlock, IdempotencyKeyReplay), so that deciding and recording
// take one round trip. Ingest therefore encodes everything but Original and
// Content, which depend on the original, and the statement adds those two
// members from the row it found.
type BlockedDetails struct {
	Mode           string         `json:"mode"`
	IdempotencyKey string         `json:"idempotency_key,omitempty"`
	Fingerprint    string         `json:"fingerprint,omitempty"`
	Original       OriginalDetail `json:"original,omitzero"`
	Blocked        BlockedCopy    `json:"blocked"`
	// Content is "identical" when the blocked copy's canonical payload equals
	// the original's, "changed" when only the business key matched: a
	// possible false positive worth an admin's look.
	Content string       `json:"content,omitempty"`
	Source  SourceDetail `json:"source"`
}

// OriginalDetail names the stored message a duplicate matched.
type OriginalDetail struct {
	ID     int64   `json:"id"`
	Docnum *string `json:"docnum"`
}

// BlockedCopy describes the copy that was not stored.
type BlockedCopy struct {
	Docnum      *string `json:"docnum"`
	ContentHash string  `json:"content_hash"`
}

// SourceDetail is where the blocked copy came from.
type SourceDetail struct {
	Endpoint      string  `json:"endpoint"`
	IntegrationID *string `json:"integration_id"`
	RemoteAddr    string  `json:"remote_addr"`
}

// Sender is the blocked_copies.sender object of a kept copy: its source
// and the request headers that identify the sender.
type Sender struct {
	SourceDetail
	Headers map[string]string `json:"headers,omitempty"`
}

// sourceDetail is m's source as the audit trail records it.
func sourceDetail(m message) SourceDetail {
	d := SourceDetail{Endpoint: m.Source.Endpoint, RemoteAddr: m.Source.RemoteAddr}
	if m.Source.IntegrationID != nil {
		id := m.Source.IntegrationID.String()
		d.IntegrationID = &id
	}
	return d
}

// senderOf encodes the sender object a copy of m would be kept with. Only
// a message deduplicated by fingerprint can be kept: an Idempotency-Key
// replay always has the content the key was first used with.
func senderOf(m message) ([]byte, error) {
	if m.IdempotencyKey != "" || m.fingerprint == nil {
		return nil, nil
	}
	raw, err := json.Marshal(Sender{SourceDetail: sourceDetail(m), Headers: m.Source.Headers})
	if err != nil {
		return nil, fmt.Errorf("encode sender: %w", err)
	}
	return raw, nil
}

// blockedDetails encodes the details m's audit event would have if m were
// blocked as a duplicate, less Original and Content (see BlockedDetails).
// It is prepared for every message because the statement that stores a
// message is also the one that blocks it.
func blockedDetails(m message) ([]byte, error) {
	if m.IdempotencyKey == "" && m.fingerprint == nil {
		return nil, nil // such a message is never a duplicate
	}
	d := BlockedDetails{
		Blocked: BlockedCopy{Docnum: m.docnumOrNull, ContentHash: hex.EncodeToString(m.contentHash[:])},
		Source:  sourceDetail(m),
	}
	if m.IdempotencyKey != "" {
		d.Mode, d.IdempotencyKey = ModeIdempotencyKey, m.IdempotencyKey
	} else if m.fingerprint != nil {
		d.Mode, d.Fingerprint = ModeFingerprint, *m.fingerprint
	}
	raw, err := json.Marshal(d)
	if err != nil {
		return nil, fmt.Errorf("encode audit details: %w", err)
	}
	return raw, nil
}
