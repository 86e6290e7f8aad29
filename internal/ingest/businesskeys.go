package ingest

import (
	"slices"
	"strings"

	"github.com/lefia/edihub/internal/fingerprint"
)

// maxKeyValueBytes is the longest business key value kept for the admin's
// search (messages.first_key_value, message_keys.value). Longer values are
// objects or arrays that no one types into a search field, and an index
// entry must stay small.
const maxKeyValueBytes = 255

// keyValues returns what is kept of a message's business key for the
// search (the first value in the message's row, the others in
// message_keys): the distinct texts of the values its fingerprint was
// computed from (read once, for the fingerprint), leaving out missing and
// overlong values and those PostgreSQL text cannot hold (a NUL character).
func keyValues(values []fingerprint.Value) []string {
	var out []string
	for _, v := range values {
		text := v.Text()
		if text == "" || len(text) > maxKeyValueBytes || strings.ContainsRune(text, 0) || slices.Contains(out, text) {
			continue
		}
		out = append(out, text)
	}
	return out
}
