package ingest

import (
	"bytes"
	"context"
	"encoding/hex"
	"encoding/json"
	"fmt"

	"github.com/lefia/edihub/internal/db"
)

// ActionDuplicateBlocked is the audit action of every blocked duplicate.
const ActionDuplicateBlocked = "message.duplicate_blocked"

// The two ways a duplicate is recognised, as recorded in audit details.
const (
	modeIdempotencyKey = "idempotency_key"
	modeFingerprint    = "fingerprint"
)

// originalRef is the stored message a duplicate was matched against.
type originalRef struct {
	ID          int64
	Docnum      *string
	ContentHash []byte
}

// BlockedDetails is the details object of a message.duplicate_blocked event.
type BlockedDetails struct {
	Mode           string         `json:"mode"`
	IdempotencyKey string         `json:"idempotency_key,omitempty"`
	Fingerprint    string         `json:"fingerprint,omitempty"`
	Original       OriginalDetail `json:"original"`
	Blocked        BlockedCopy    `json:"blocked"`
	// Content is "identical" when the blocked copy's canonical payload equals
	// the original's, "changed" when only the business key matched: a
	// possible false positive worth an admin's look.
	Content string       `json:"content"`
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

// recordBlocked writes the audit event of a blocked duplicate in the
// transaction that decided it, so the two cannot disagree.
func recordBlocked(ctx context.Context, q *db.Queries, m message, mode, matchKey string, original originalRef) error {
	d := BlockedDetails{
		Mode:     mode,
		Original: OriginalDetail{ID: original.ID, Docnum: original.Docnum},
		Blocked:  BlockedCopy{Docnum: m.docnumOrNull, ContentHash: hex.EncodeToString(m.contentHash[:])},
		Content:  "changed",
		Source:   SourceDetail{Endpoint: m.Source.Endpoint, RemoteAddr: m.Source.RemoteAddr},
	}
	if bytes.Equal(original.ContentHash, m.contentHash[:]) {
		d.Content = "identical"
	}
	if mode == modeIdempotencyKey {
		d.IdempotencyKey = matchKey
	} else {
		d.Fingerprint = matchKey
	}
	if m.Source.IntegrationID != nil {
		id := m.Source.IntegrationID.String()
		d.Source.IntegrationID = &id
	}
	raw, err := json.Marshal(d)
	if err != nil {
		return fmt.Errorf("encode audit details: %w", err)
	}
	if err := q.AuditEventInsert(ctx, db.AuditEventInsertParams{
		TenantID: &m.TenantID, EnvironmentID: &m.EnvironmentID, MessageTypeID: &m.messageType.ID,
		MessageID: &original.ID, Action: ActionDuplicateBlocked, Actor: m.Source.Actor,
		MatchKey: &matchKey, Details: raw,
	}); err != nil {
		return fmt.Errorf("record blocked duplicate: %w", err)
	}
	return nil
}
