package server_test

import (
	"bytes"
	"fmt"
	"net/http"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/lefia/edihub/internal/messagetype"
)

// A key path that matches nothing in a document must count as missing,
// whatever form "nothing" takes: a fan-out or a multipath that matched no
// element yields [], and an empty object or an array of nulls says no more.
// Before, each was a value, so every document of the type got one
// fingerprint and all but the first were answered 200 duplicate and never
// stored. Here different documents, posted at once, are each stored, fall
// back to their docnum, and a resend of each is still its duplicate.
func TestKeyPathsMatchingNothingNeverJoinDocuments(t *testing.T) {
	t.Parallel()
	b := setup(t)
	types := map[string][]string{
		"FANOUT":    {"items.#.sku"},
		"MULTIPATH": {"[order.number,order.ref]"},
		"EMPTIES":   {"header", "refs"},
	}
	for code, paths := range types {
		b.messageType(t, code, paths, nil)
	}
	const perType = 12
	body := func(code string, i int) []byte {
		return fmt.Appendf(nil, `{"message_type":%q,"docnum":"DOC-%d","payload":{"items":[{"qty":%d}],"order":{},"header":{},"refs":[null,null],"line":%d}}`,
			code, i, i, i)
	}
	postAll := func() []response {
		var (
			wg  sync.WaitGroup
			mu  sync.Mutex
			out []response
		)
		for code := range types {
			for i := range perType {
				wg.Go(func() {
					r := b.post(t, body(code, i))
					mu.Lock()
					out = append(out, r)
					mu.Unlock()
				})
			}
		}
		wg.Wait()
		return out
	}

	for _, r := range postAll() {
		require.Equal(t, http.StatusCreated, r.status, "a different document is stored: %s", r.body)
	}
	require.Equal(t, len(types)*perType, b.messages(t))
	require.Equal(t, len(types)*perType, b.count(t, `SELECT count(DISTINCT fingerprint) FROM messages`),
		"each document falls back to its own docnum")

	for _, r := range postAll() {
		require.Equal(t, http.StatusOK, r.status, "a resend is a duplicate: %s", r.body)
		require.Equal(t, true, r.json(t)["duplicate"])
	}
	require.Equal(t, len(types)*perType, b.messages(t))
	require.Zero(t, b.count(t, `SELECT count(*) FROM message_key_values`), "a value without identity is not kept for search")
}

// The IDoc presets that edihub ships carry business identity only: an
// invoice without a reference of qualifier 009 and an order without a
// number are each stored under their DOCNUM. Before, the constant MESTYP
// beside the missing number made every such invoice after the first a
// "changed copy" of it, answered 200 duplicate and held for review.
func TestIDocPresetsStoreDocumentsWithoutTheirNumber(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.messageType(t, "INVOIC02", messagetype.IDocINVOIC02Paths, nil)
	b.messageType(t, "ORDERS05", messagetype.IDocORDERS05Paths, nil)

	invoice := bytes.Replace(readFile(t, "invoic02.json"), []byte(`"QUALF": "009"`), []byte(`"QUALF": "010"`), 1)
	order := bytes.Replace(readFile(t, "orders05.json"), []byte(`"BELNR": "4500012345",`), nil, 1)
	for code, doc := range map[string][]byte{"INVOIC02": invoice, "ORDERS05": order} {
		require.NotEqual(t, readFile(t, map[string]string{"INVOIC02": "invoic02.json", "ORDERS05": "orders05.json"}[code]), doc)
		for i := range 3 {
			env := fmt.Appendf(nil, `{"message_type":%q,"docnum":"00000000007000%02d","payload":%s}`, code, i, doc)
			r := b.post(t, env)
			require.Equal(t, http.StatusCreated, r.status, "%s #%d: %s", code, i, r.body)
		}
	}
	require.Equal(t, 6, b.messages(t))
	require.Zero(t, b.count(t, `SELECT count(*) FROM blocked_copies`))
}
