package auditevent

// The ways a duplicate is recognised, as recorded in BlockedDetails.
const (
	ModeIdempotencyKey = "idempotency_key"
	ModeFingerprint    = "fingerprint"
	// ModeInterchange is a message of an X12 or EDIFACT interchange that
	// repeated one received before (its control number and segments).
	ModeInterchange = "interchange"
)

// What a blocked copy's content is, compared with its original's, as
// recorded in BlockedDetails (the statements MessageStoreOrBlock and
// IdempotencyKeyReplay write these words).
const (
	ContentIdentical = "identical"
	// ContentShapeOnly is a copy whose canonical payload differs from the
	// original's only in the shape of segments (an object in one, a
	// one-item array holding the same object in the other; see
	// canon.ShapeHash): the key paths read both alike, so it says nothing
	// new, and it is not kept for review.
	ContentShapeOnly = "shape_only"
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
	Mode           string `json:"mode"`
	IdempotencyKey string `json:"idempotency_key,omitempty"`
	Fingerprint    string `json:"fingerprint,omitempty"`
	// Interchange is the repeated interchange, for ModeInterchange.
	Interchange *InterchangeDetail `json:"interchange,omitempty"`
	Original    OriginalDetail     `json:"original,omitzero"`
	Blocked     BlockedCopy        `json:"blocked"`
	// Content is "identical" when the blocked copy's canonical payload equals
	// the original's, "shape_only" when it differs only in how segments are
	// wrapped (ContentShapeOnly), "changed" when only the business key
	// matched: a possible false positive worth an admin's look.
	Content string       `json:"content,omitempty"`
	Source  SourceDetail `json:"source"`
}

// Key is the fingerprint, the Idempotency-Key or the interchange control
// number the duplicate matched.
func (d BlockedDetails) Key() string {
	switch {
	case d.Mode == ModeIdempotencyKey:
		return d.IdempotencyKey
	case d.Mode == ModeInterchange && d.Interchange != nil:
		return d.Interchange.ControlNumber
	}
	return d.Fingerprint
}

// InterchangeDetail names an X12 or EDIFACT interchange.
type InterchangeDetail struct {
	Standard      string `json:"standard"`
	Sender        string `json:"sender"`
	Receiver      string `json:"receiver"`
	ControlNumber string `json:"control_number"`
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
	RequestID     string  `json:"request_id,omitempty"`
	// Position is the copy's place in a request of several messages (an
	// IDoc packet or a batch), 1 for the first; absent for a single one.
	Position int `json:"position,omitempty"`
}

// Sender is the blocked_copies.sender object of a kept copy: its source
// and the request headers that identify the sender.
type Sender struct {
	SourceDetail
	Headers map[string]string `json:"headers,omitempty"`
}

// ReleasedDetails is the details object of a message.duplicate_released
// event.
type ReleasedDetails struct {
	CopyID            int64  `json:"copy_id"`
	OriginalMessageID int64  `json:"original_message_id"`
	NewMessageID      int64  `json:"new_message_id"`
	Reason            string `json:"reason"`
	AdminEmail        string `json:"admin_email"`
}

// DismissedDetails is the details object of a message.duplicate_dismissed
// event.
type DismissedDetails struct {
	CopyID            int64  `json:"copy_id"`
	OriginalMessageID int64  `json:"original_message_id"`
	Reason            string `json:"reason"`
	AdminEmail        string `json:"admin_email"`
}

// AlertDetails is the details object of an alert.* event.
type AlertDetails struct {
	AlertID     int64  `json:"alert_id"`
	Rule        string `json:"rule"`
	SubjectKind string `json:"subject_kind"`
	SubjectKey  string `json:"subject_key"`
	Title       string `json:"title"`
}
