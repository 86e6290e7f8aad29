package envelope

import (
	"strings"

	"github.com/tidwall/gjson"

	"github.com/lefia/edihub/internal/apperr"
)

// BatchItem is one envelope of a batch body, or why it cannot be read.
type BatchItem struct {
	Envelope
	// IdempotencyKey is the item's "idempotency_key" member; HasKey tells
	// an absent member from an empty one, which is not a valid key.
	IdempotencyKey string
	HasKey         bool
	Err            *apperr.Error
}

// ParseBatch reads the body of POST /api/edi-hub/receive-messages,
// {"messages": [<envelope>, ...]} with 1 to maxItems envelopes. An error
// about the body as a whole is returned; an error about one item is kept in
// that item, so that the caller can list every bad item at once. Payloads
// are slices of body, as with Parse.
func ParseBatch(body []byte, maxItems int) ([]BatchItem, error) {
	// The body, its array, the items and their members are the four
	// levels read.
	s, err := checkShallow(body, 4)
	if err != nil {
		return nil, err
	}
	members, err := s.object(s.skipSpace(0))
	if err != nil {
		return nil, err
	}
	messages, ok := members["messages"]
	if !ok {
		return nil, apperr.New(apperr.Invalid, "missing-field", "messages is required")
	}
	var list []int
	if messages.IsArray() {
		list = s.elements(messages.Index, maxItems)
	}
	if len(list) == 0 || len(list) > maxItems {
		return nil, apperr.New(apperr.Invalid, "invalid-field",
			"messages must be an array of 1 to %d envelopes", maxItems)
	}
	items := make([]BatchItem, len(list))
	for i, start := range list {
		items[i].read(parseChecked(s, start))
	}
	return items, nil
}

// read fills the item from its envelope, its members and the error that
// reading them gave.
func (item *BatchItem) read(env Envelope, members map[string]gjson.Result, err error) {
	if err != nil {
		item.Err = asUserError(err)
		return
	}
	item.Envelope = env
	switch key := members["idempotency_key"]; key.Type {
	case gjson.Null:
	case gjson.String:
		item.IdempotencyKey, item.HasKey = strings.Clone(key.Str), true
	default:
		item.Err = apperr.New(apperr.Invalid, "invalid-idempotency-key", "idempotency_key must be a string")
	}
}

// asUserError returns the user-facing error Parse reported; Parse reports
// no other kind.
func asUserError(err error) *apperr.Error {
	if ae, ok := apperr.As(err); ok {
		return ae
	}
	return &apperr.Error{Kind: apperr.Invalid, Type: "malformed-json", Detail: "the envelope cannot be read", Err: err}
}
