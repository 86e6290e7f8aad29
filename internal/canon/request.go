package canon

import "crypto/sha256"

// RequestHash returns the SHA-256 of the canonical JSON array
// [messageType, docnum, payload], where an empty docnum is written as null.
// It identifies a request as a whole, so that an idempotency key reused with
// a different message type, docnum or payload can be told apart from a
// genuine retry.
//
// canonicalPayload must already be canonical (the output of JSON); it is
// hashed as it is rather than parsed again, because payloads run to megabytes
// and have been canonicalised once already. The strings are serialised with
// AppendString, so the result equals the SHA-256 of JSON applied to the same
// array written in any other valid way.
func RequestHash(messageType, docnum string, canonicalPayload []byte) [32]byte {
	// The prefix is small, so it is built in one buffer; the payload is
	// streamed into the hash to avoid copying it.
	prefix := make([]byte, 0, len(messageType)+len(docnum)+8)
	prefix = append(prefix, '[')
	prefix = AppendString(prefix, messageType)
	prefix = append(prefix, ',')
	if docnum == "" {
		prefix = append(prefix, "null"...)
	} else {
		prefix = AppendString(prefix, docnum)
	}
	prefix = append(prefix, ',')

	h := sha256.New()
	h.Write(prefix)
	h.Write(canonicalPayload)
	h.Write([]byte{']'})
	var sum [32]byte
	h.Sum(sum[:0])
	return sum
}
