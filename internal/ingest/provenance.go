package ingest

import (
	"encoding/hex"
	"encoding/json"
	"fmt"

	"github.com/lefia/edihub/internal/auditevent"
)

// sourceDetail is m's source as the audit trail records it.
func sourceDetail(m message) auditevent.SourceDetail {
	d := auditevent.SourceDetail{Endpoint: m.Source.Endpoint, RemoteAddr: m.Source.RemoteAddr,
		RequestID: m.Source.RequestID, Position: m.Source.Position}
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
	raw, err := json.Marshal(auditevent.Sender{SourceDetail: sourceDetail(m), Headers: m.Source.Headers})
	if err != nil {
		return nil, fmt.Errorf("encode sender: %w", err)
	}
	return raw, nil
}

// encodeProvenance sets m's blocked and sender objects, which the
// statements that may block m record.
func (m *message) encodeProvenance() error {
	var err error
	if m.blocked, err = blockedDetails(*m); err != nil {
		return err
	}
	m.sender, err = senderOf(*m)
	return err
}

// blockedDetails encodes the details m's audit event would have if m were
// blocked as a duplicate, less Original and Content (see
// auditevent.BlockedDetails).
func blockedDetails(m message) ([]byte, error) {
	if m.IdempotencyKey == "" && m.fingerprint == nil {
		return nil, nil // such a message is never a duplicate
	}
	d := auditevent.BlockedDetails{
		Blocked: auditevent.BlockedCopy{Docnum: m.docnumOrNull, ContentHash: hex.EncodeToString(m.contentHash[:])},
		Source:  sourceDetail(m),
	}
	if m.IdempotencyKey != "" {
		d.Mode, d.IdempotencyKey = auditevent.ModeIdempotencyKey, m.IdempotencyKey
	} else if m.fingerprint != nil {
		d.Mode, d.Fingerprint = auditevent.ModeFingerprint, *m.fingerprint
	}
	raw, err := json.Marshal(d)
	if err != nil {
		return nil, fmt.Errorf("encode audit details: %w", err)
	}
	return raw, nil
}
