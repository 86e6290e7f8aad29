// Package messageview explains one stored message to an admin: its metadata, its
// payload pretty-printed with the values that formed its fingerprint marked
// where the one evaluation of its key paths found them,
// and the fingerprint recomputed with the message type's current
// duplicate_key_fields, so that an admin can see why two messages did or did
// not match and whether the configuration changed since the message arrived.
package messageview

import (
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"mime"
	"strings"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/lefia/edihub/internal/apperr"
	"github.com/lefia/edihub/internal/auth"
	"github.com/lefia/edihub/internal/db"
	"github.com/lefia/edihub/internal/fingerprint"
	"github.com/lefia/edihub/internal/idocxml"
	"github.com/lefia/edihub/internal/storedview"
)

// Service loads messages for the admin pages.
type Service struct {
	q *db.Queries
}

// New returns a Service on pool.
func New(pool *pgxpool.Pool) *Service { return &Service{q: db.On(pool)} }

// Message is a stored message as the admin's message page shows it.
type Message struct {
	ID             int64
	Tenant         string
	Environment    string
	MessageType    string
	Docnum         string
	ReceivedAt     time.Time
	Endpoint       string
	IntegrationID  string
	IdempotencyKey string
	RemoteAddr     string
	ContentHash    string
	// Fingerprint is the fingerprint computed when the message arrived, ""
	// when it got none; it never changes.
	Fingerprint string
	// HoldsFingerprint reports whether this message is still the one that
	// retransmissions with its fingerprint are matched against.
	HoldsFingerprint bool
	// Payload is the payload as the page shows it, its key values marked.
	Payload PayloadView
	Key     Key
	// Received is what the message arrived as when that was not its JSON
	// payload (IDoc-XML); Payload is then the JSON view its paths read.
	Received *Received
	// Interchange is the X12 or EDIFACT envelope the message came in; nil
	// for a message that did not come in one.
	Interchange *Interchange
}

// Received is a message's bytes as they arrived, when not as JSON.
type Received struct {
	ContentType string
	Size        int
	// Text is the start of the bytes, read in their charset, at most
	// MaxShownBytes of them; Cut reports that they go on.
	Text string
	Cut  bool
	// Indented is Text laid out one element a line when it is whole XML
	// (indentXML); "" otherwise.
	Indented string
	// Position and Of place an IDoc in its packet; 0 when it came alone.
	Position, Of int
}

// Segment is a piece of the pretty-printed payload; Marked pieces are values
// that formed the fingerprint, read at Path.
type Segment struct {
	Text   string
	Marked bool
	Path   string
}

// Key explains the fingerprint as the message type's current configuration
// computes it.
type Key struct {
	Values      []fingerprint.Value // one per configured path, in order
	Fallback    fingerprint.Fallback
	Fingerprint string // "" when the message gets no fingerprint
	// Changed reports whether Fingerprint differs from the message's stored
	// fingerprint: the configuration changed since the message arrived.
	Changed bool
	// Problem says why the current configuration cannot compute a
	// fingerprint for this payload; the other fields are empty then.
	Problem string
}

// Get loads message id within scope. A message outside the scope is reported
// as missing, so its existence is not revealed.
func (s *Service) Get(ctx context.Context, scope auth.Scope, id int64) (Message, error) {
	row, err := s.q.MessageGetForAdmin(ctx, db.MessageGetForAdminParams{
		ID: id, ScopeTenantID: scope.TenantFilter(), ShownBytes: MaxShownBytes,
	})
	if errors.Is(err, db.ErrNotFound) {
		return Message{}, apperr.New(apperr.NotFound, "not-found", "there is no message %d", id)
	}
	if err != nil {
		return Message{}, fmt.Errorf("load message %d: %w", id, err)
	}
	m := Message{
		ID: row.ID, Tenant: row.TenantSlug, Environment: row.EnvironmentSlug, MessageType: row.MessageTypeCode,
		Docnum: db.OrEmpty(row.Docnum), ReceivedAt: row.ReceivedAt.UTC(), Endpoint: row.SourceEndpoint,
		IdempotencyKey: db.OrEmpty(row.IdempotencyKey), RemoteAddr: row.RemoteAddr,
		ContentHash: hex.EncodeToString(row.ContentHash), Fingerprint: db.OrEmpty(row.ComputedFingerprint),
		HoldsFingerprint: row.Fingerprint != nil,
	}
	if row.IntegrationID != nil {
		m.IntegrationID = row.IntegrationID.String()
	}
	m.Received = ReceivedForm(row.ContentType, row.ReceivedHead, int(row.ReceivedSize), row.PacketPosition, row.PacketSize)
	view, err := storedview.Stored{
		Payload: row.Payload, ContentType: row.ContentType, Received: row.ViewBytes, Frame: row.EdiFrame,
	}.View()
	if err != nil {
		// The bytes were read when the message arrived, so this is a
		// bug; the page still shows what was received.
		m.Key = Key{Problem: "The JSON view cannot be rebuilt from the bytes received: " + err.Error()}
		return m, nil
	}
	m.Key = explain(fingerprint.Input{
		MessageTypeID: row.MessageTypeID, Paths: row.DuplicateKeyFields, Docnum: m.Docnum, Payload: view,
	}, m.Fingerprint)
	m.Payload = mark(view, m.Key)
	m.Interchange = interchangeOf(view, m.Received, m.Docnum)
	return m, nil
}

// ReceivedForm is what a stored message or blocked copy arrived as, read
// from its columns (content_type, the first MaxShownBytes of
// received_bytes and their whole size, packet_position, packet_size); nil
// when it arrived as JSON, whose payload is what it received.
func ReceivedForm(contentType string, head []byte, size int, position, of *int32) *Received {
	if head == nil {
		return nil
	}
	r := &Received{ContentType: contentType, Size: size, Cut: len(head) < size}
	head = excerpt(head, !r.Cut)
	_, params, _ := mime.ParseMediaType(contentType)
	text, err := idocxml.Text(head, params["charset"])
	if err != nil {
		// Only readable bodies are stored, so this would be a bug; the
		// bytes are still shown, with what cannot be read replaced.
		text = strings.ToValidUTF8(string(head), "\uFFFD")
	}
	r.Text = text
	if strings.HasPrefix(strings.TrimSpace(text), "<") {
		// IDoc-XML, whatever its Content-Type calls it
		// (application/x-sap.idoc, text/xml): X12 and EDIFACT never begin
		// with a tag.
		r.Indented, _ = indentXML(text)
	}
	if position != nil && of != nil {
		r.Position, r.Of = int(*position), int(*of)
	}
	return r
}

// explain recomputes the fingerprint of in and compares it with stored.
func explain(in fingerprint.Input, stored string) Key {
	res, err := fingerprint.Compute(in)
	if err != nil {
		return Key{Problem: err.Error()}
	}
	return Key{
		Values: res.Values, Fallback: res.Fallback, Fingerprint: res.Fingerprint,
		Changed: res.Fingerprint != stored,
	}
}
