package ingest

import (
	"crypto/sha256"
	"encoding/binary"

	lru "github.com/hashicorp/golang-lru/v2"
)

// hashMemoEntries bounds the payloads whose hashes are remembered: at about
// 400 bytes an entry, 16,384 of them hold 6.5 MB, and cover
// the last three minutes of traffic at a hundred messages a second.
const hashMemoEntries = 16384

// hashMemo remembers the hashes of recently received payloads under the
// SHA-256 of their bytes as received (and their tenant's id). A
// retransmission (an IDoc that SAP sends again because it lost the
// acknowledgement, a webhook retried after a timeout) repeats its payload
// byte for byte, and then its canonical form, which costs about sixteen
// times as much as hashing the bytes (BenchmarkContentHash against
// BenchmarkRawSHA256), is not worked out again. The hashes are a function
// of the bytes and of whether their writer gives them one shape
// (Request.ShapeIsContent), which the key holds too, so an entry is never
// stale; the request hash, which covers the message type and docnum too,
// is reused only for the same two. Tenants never share an entry.
type hashMemo = lru.Cache[[32]byte, payloadHashes]

// payloadHashes are what hash works out from a payload's canonical form,
// and the fingerprint of the last message received with the payload ("" for
// none): a message with the same bytes and the same fingerprint is most
// likely its retransmission (see blockRetransmissions). The fingerprint only
// predicts; the database decides.
type payloadHashes struct {
	content, shape [32]byte
	fingerprint    string
	// request is the request hash for requestType and requestDocnum,
	// when requested says a request with an Idempotency-Key worked it out.
	requestType, requestDocnum string
	request                    [32]byte
	requested                  bool
}

// covers says that h holds the request hash of a request of messageType
// and docnum.
func (h payloadHashes) covers(messageType, docnum string) bool {
	return h.requested && h.requestType == messageType && h.requestDocnum == docnum
}

func newHashMemo(entries int) *hashMemo {
	memo, err := lru.New[[32]byte, payloadHashes](entries)
	if err != nil {
		panic(err) // only for a size below one, which callers never pass
	}
	return memo
}

// memoKey is the memo's key for a payload received for a tenant. A view
// whose writer gives it one shape has its own prefix, which JSON never
// starts with: its shape hash is its content hash, whereas the same bytes
// sent as JSON have the shape hash of their shape form.
func memoKey(tenantID int64, shapeIsContent bool, payload []byte) [32]byte {
	if shapeIsContent {
		return tenantKey(tenantID, []byte("view:"), payload)
	}
	return tenantKey(tenantID, payload)
}

// contentMemoKey is the memo's key for a payload that came with its
// canonical form, whose content hash is content: a parser wrote the form,
// and its hashes start from that hash anyway, so the payload's bytes are
// not hashed a third time for the key. Its own prefix keeps it apart from
// every memoKey. Only the views' parsers write a canonical form, and they
// give their views one shape.
func contentMemoKey(tenantID int64, content [32]byte) [32]byte {
	return tenantKey(tenantID, []byte("canonical:"), content[:])
}

// tenantKey is the SHA-256 of the tenant's id and parts.
func tenantKey(tenantID int64, parts ...[]byte) [32]byte {
	h := sha256.New()
	var id [8]byte
	binary.BigEndian.PutUint64(id[:], uint64(tenantID))
	h.Write(id[:])
	for _, p := range parts {
		h.Write(p)
	}
	var key [32]byte
	h.Sum(key[:0])
	return key
}
