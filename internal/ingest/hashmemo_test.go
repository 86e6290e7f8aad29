package ingest

import (
	"context"
	"crypto/sha256"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/lefia/edihub/internal/canon"
	"github.com/lefia/edihub/internal/db"
	"github.com/lefia/edihub/internal/messagetype"
)

// hashed runs Service.hash on a message of req, as prepare does.
func hashed(t *testing.T, ctx context.Context, s *Service, req Request) (message, error) {
	t.Helper()
	m := message{Request: req}
	return m, s.hash(ctx, &m)
}

// A payload received again gets the hashes its canonical form gives, from
// the memo: with every canonicalisation slot taken and the context ended,
// only a remembered payload can be hashed at all.
func TestHashMemoGivesTheCanonicalHashes(t *testing.T) {
	t.Parallel()
	s := New(nil, time.Hour, nil)
	ctx := t.Context()
	orders := messagetype.Prepare(db.MessageType{ID: 1, TenantID: 7, Code: "ORDERS05"})
	invoic := messagetype.Prepare(db.MessageType{ID: 2, TenantID: 7, Code: "INVOIC02"})
	payload := []byte(`{"ORDERS05":{"IDOC":{"E1EDK01":[{"BELNR":"4500012345"}],"EDI_DC40":{"DOCNUM":"1"}}}}`)
	content, err := canon.ContentHash(payload)
	require.NoError(t, err)
	canonical, err := canon.JSON(payload)
	require.NoError(t, err)
	shape := canon.ShapeHash(canonical, content)
	require.NotEqual(t, content, shape, "the payload has a one-item array, so its shape form differs")

	first, err := hashed(t, ctx, s, Request{TenantID: 7, MessageType: orders, Docnum: "1", Payload: payload, IdempotencyKey: "k"})
	require.NoError(t, err)
	require.Equal(t, content, first.contentHash)
	require.Equal(t, shape, first.shapeHash)
	require.Equal(t, canon.RequestHash("ORDERS05", "1", canonical), first.requestHash)

	for range cap(s.canonicalising) {
		s.canonicalising <- struct{}{}
	}
	ended, cancel := context.WithCancel(ctx)
	cancel()
	again, err := hashed(t, ended, s, Request{TenantID: 7, MessageType: orders, Docnum: "1", Payload: payload, IdempotencyKey: "k"})
	require.NoError(t, err, "a remembered payload needs no canonicalisation")
	require.Equal(t, first.contentHash, again.contentHash)
	require.Equal(t, first.shapeHash, again.shapeHash)
	require.Equal(t, first.requestHash, again.requestHash)
	unkeyed, err := hashed(t, ended, s, Request{TenantID: 7, MessageType: invoic, Payload: payload})
	require.NoError(t, err, "without a key, the type and docnum do not matter")
	require.Equal(t, content, unkeyed.contentHash)

	// The request hash covers the type and docnum: another of either is
	// canonicalised again, and another tenant never reads this tenant's entry.
	for _, other := range []Request{
		{TenantID: 7, MessageType: invoic, Docnum: "1", Payload: payload, IdempotencyKey: "k"},
		{TenantID: 7, MessageType: orders, Docnum: "2", Payload: payload, IdempotencyKey: "k"},
		{TenantID: 8, MessageType: orders, Payload: payload},
	} {
		_, err := hashed(t, ended, s, other)
		require.ErrorIs(t, err, context.Canceled, "%s %q of tenant %d is worked out anew", other.MessageType.Code, other.Docnum, other.TenantID)
	}
	for range cap(s.canonicalising) {
		<-s.canonicalising
	}
	other, err := hashed(t, ctx, s, Request{TenantID: 7, MessageType: invoic, Docnum: "1", Payload: payload, IdempotencyKey: "k"})
	require.NoError(t, err)
	require.Equal(t, content, other.contentHash)
	require.Equal(t, canon.RequestHash("INVOIC02", "1", canonical), other.requestHash)
	tenant8, err := hashed(t, ctx, s, Request{TenantID: 8, MessageType: orders, Payload: payload})
	require.NoError(t, err)
	require.Equal(t, content, tenant8.contentHash)

	// A payload that cannot be canonicalised is refused each time, never remembered.
	for range 2 {
		_, err := hashed(t, ctx, s, Request{TenantID: 7, MessageType: orders, Payload: []byte(`{"a":1,"a":2}`)})
		require.ErrorContains(t, err, "cannot be canonicalised")
	}
	require.Equal(t, 2, s.hashes.Len(), "one entry for each tenant's payload")
}

// A payload that comes with its canonical form (an IDoc's or a transaction
// set's view) is remembered by its content hash: the same content again,
// whatever bytes its view was written with, gets the remembered shape hash
// and is seen under the same fingerprint; another tenant's is not.
func TestHashMemoKeepsParsedPayloadsByTheirContent(t *testing.T) {
	t.Parallel()
	s := New(nil, time.Hour, nil)
	mt := messagetype.Prepare(db.MessageType{ID: 1, TenantID: 7, Code: "850", DuplicateKeyFields: []string{"BEG.0.BEG03"}})
	view := []byte(`{"ST":[{"ST01":"850"}],"BEG":[{"BEG03":"PO-1"}]}`)
	canonical, err := canon.JSON(view)
	require.NoError(t, err)
	content, err := canon.ContentHash(view)
	require.NoError(t, err)
	parsed := func(tenant int64, payload []byte) Request {
		return Request{TenantID: tenant, MessageType: mt, Payload: payload, CanonicalPayload: canonical, ShapeIsContent: true}
	}
	prepared := func(req Request) message {
		m, err := s.prepare(t.Context(), req)
		require.NoError(t, err)
		return m
	}

	first := prepared(parsed(7, view))
	require.Equal(t, content, first.contentHash)
	require.Equal(t, content, first.shapeHash, "a view with one shape")
	require.False(t, first.seen)
	require.Nil(t, first.blocked, "a message that looks new is stored without encoding its audit details")
	require.True(t, s.hashes.Contains(contentMemoKey(7, content)))
	require.False(t, s.hashes.Contains(memoKey(7, true, view)), "the view's bytes are not hashed for the key")

	s.hashes.Add(contentMemoKey(7, content), payloadHashes{content: content, shape: [32]byte{1}, fingerprint: *first.fingerprint})
	again := prepared(parsed(7, append([]byte(" "), view...)))
	require.True(t, again.seen, "the same content under the same fingerprint is a likely retransmission")
	require.Equal(t, [32]byte{1}, again.shapeHash, "its hashes come from the memo")
	require.NotNil(t, again.blocked, "a likely duplicate comes with its audit details")
	require.False(t, prepared(parsed(8, view)).seen, "another tenant never reads this tenant's entry")
}

// An interchange's message, one with a frame, is hashed without the memo:
// it neither reads an entry, even one its own content and fingerprint
// left, nor leaves one, and its hashes are its canonical form's. The same
// view prepared outside an interchange is remembered as before.
func TestHashMemoLeavesInterchangeMessagesOut(t *testing.T) {
	t.Parallel()
	s := New(nil, time.Hour, nil)
	mt := messagetype.Prepare(db.MessageType{ID: 1, TenantID: 7, Code: "850", DuplicateKeyFields: []string{"BEG.0.BEG03"}})
	view := []byte(`{"BEG":[{"BEG03":"PO-1"}],"ST":[{"ST01":"850"}],"interchange":{"control_number":"000000001"}}`)
	canonical, err := canon.JSON(view)
	require.NoError(t, err)
	content := sha256.Sum256(canonical)
	outside := Request{TenantID: 7, MessageType: mt, Payload: view, CanonicalPayload: canonical, ShapeIsContent: true}
	req := outside
	req.Received = &Received{ContentType: "application/edi-x12", Bytes: []byte("ST*850*0001~BEG*00*SA*PO-1~SE*3*0001~"),
		Frame: []byte(`{"element":42,"component":62,"terminator":126,"charset":"UTF-8","interchange":{"control_number":"000000001"}}`)}

	m, err := s.prepare(t.Context(), req)
	require.NoError(t, err)
	require.Equal(t, content, m.contentHash)
	require.Equal(t, content, m.shapeHash)
	require.False(t, m.seen)
	require.Zero(t, s.hashes.Len(), "an interchange's message leaves nothing in the memo")

	s.hashes.Add(contentMemoKey(7, content), payloadHashes{content: content, shape: [32]byte{1}, fingerprint: *m.fingerprint})
	again, err := s.prepare(t.Context(), req)
	require.NoError(t, err)
	require.False(t, again.seen, "nor does it read the memo")
	require.Equal(t, content, again.shapeHash, "its hashes are its canonical form's, not the memo's")

	alone, err := s.prepare(t.Context(), outside)
	require.NoError(t, err)
	require.True(t, alone.seen, "the same view outside an interchange reads the memo")
}

// A view whose writer gives it one shape has its content hash for its
// shape hash, and the same bytes sent as JSON the hash of their shape form,
// in whichever order they arrive: the memo keeps the two apart.
func TestHashMemoKeepsOneShapeViewsApartFromJSON(t *testing.T) {
	t.Parallel()
	mt := messagetype.Prepare(db.MessageType{ID: 1, TenantID: 7, Code: "850"})
	// A tab in a value: the parser leaves such a view's canonical form to canon.
	view := []byte(`{"ST":[{"ST01":"850"}],"BEG":[{"BEG03":"PO\t1"}]}`)
	content, err := canon.ContentHash(view)
	require.NoError(t, err)
	canonical, err := canon.JSON(view)
	require.NoError(t, err)
	shape := canon.ShapeHash(canonical, content)
	require.NotEqual(t, content, shape)
	for _, viewFirst := range []bool{true, false} {
		s := New(nil, time.Hour, nil)
		asView := func() {
			m, err := hashed(t, t.Context(), s, Request{TenantID: 7, MessageType: mt, Payload: view, ShapeIsContent: true})
			require.NoError(t, err)
			require.Equal(t, content, m.contentHash)
			require.Equal(t, content, m.shapeHash, "the view's shape hash is its content hash")
		}
		asJSON := func() {
			m, err := hashed(t, t.Context(), s, Request{TenantID: 7, MessageType: mt, Payload: view})
			require.NoError(t, err)
			require.Equal(t, content, m.contentHash)
			require.Equal(t, shape, m.shapeHash, "JSON's shape hash is its shape form's")
		}
		if viewFirst {
			asView()
			asJSON()
		} else {
			asJSON()
			asView()
		}
		require.Equal(t, 2, s.hashes.Len())
	}
}

// The memo holds at most its number of entries, dropping the least recently used.
func TestHashMemoIsBounded(t *testing.T) {
	t.Parallel()
	s := New(nil, time.Hour, nil)
	s.hashes = newHashMemo(2)
	mt := messagetype.Prepare(db.MessageType{ID: 1, TenantID: 7, Code: "ORDERS05"})
	for _, p := range []string{`{"n":1}`, `{"n":2}`, `{"n":3}`} {
		_, err := hashed(t, t.Context(), s, Request{TenantID: 7, MessageType: mt, Payload: []byte(p)})
		require.NoError(t, err)
	}
	require.Equal(t, 2, s.hashes.Len())
	require.False(t, s.hashes.Contains(memoKey(7, false, []byte(`{"n":1}`))))
	require.True(t, s.hashes.Contains(memoKey(7, false, []byte(`{"n":3}`))))
}

// A payload is seen, a likely retransmission, only when the memo's entry
// was left by a message with the same fingerprint: the same bytes under
// another fingerprint (another docnum, for a type keyed by it) are not,
// and leave theirs in the entry; a message without a fingerprint is never
// seen.
func TestHashMemoSeesTheSameBytesWithTheSameFingerprint(t *testing.T) {
	t.Parallel()
	s := New(nil, time.Hour, nil)
	mt := messagetype.Prepare(db.MessageType{ID: 1, TenantID: 7, Code: "ORDERS05"})
	seen := func(fingerprint string) bool {
		t.Helper()
		m := message{Request: Request{TenantID: 7, MessageType: mt, Payload: []byte(`{"id":"A"}`)}}
		if fingerprint != "" {
			m.fingerprint = &fingerprint
		}
		require.NoError(t, s.hash(t.Context(), &m))
		return m.seen
	}
	require.False(t, seen("f1"), "received for the first time")
	require.True(t, seen("f1"), "the same bytes and fingerprint")
	require.False(t, seen("f2"), "the same bytes under another fingerprint")
	require.False(t, seen("f1"), "the other fingerprint was left in the entry")
	require.True(t, seen("f1"))
	require.False(t, seen(""), "no fingerprint")
	require.False(t, seen(""))
	require.Equal(t, 1, s.hashes.Len())
}
