package server_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/lefia/edihub/internal/auth"
	"github.com/lefia/edihub/internal/testfactory"
)

func TestReceiveNewMessage(t *testing.T) {
	t.Parallel()
	b := setup(t)
	mtID := b.messageType(t, "ORDERS05", nil, nil)

	body := []byte(`{"message_type":"ORDERS05","docnum":"0000000064132944",` +
		`"payload":{"EDI_DC40":{"DOCNUM":"0000000064132944"},  "E1EDK01":{"BELNR":"4700000325"}}}`)
	resp := b.post(t, body)
	require.Equal(t, http.StatusCreated, resp.status, "%s", resp.body)
	require.Empty(t, resp.header.Get("Idempotent-Replayed"))

	got := resp.json(t)
	require.Equal(t, "accepted", got["status"])
	require.Equal(t, false, got["duplicate"])
	require.Equal(t, "ORDERS05", got["message_type"])
	require.Equal(t, "0000000064132944", got["docnum"])
	require.NotEmpty(t, got["received_at"])
	// No paths configured: the fingerprint is over [message_type_id, docnum].
	want := sha256.Sum256([]byte(fmt.Sprintf(`["%d","0000000064132944"]`, mtID)))
	require.Equal(t, hex.EncodeToString(want[:]), got["fingerprint"])

	// The payload is stored byte for byte, whitespace included.
	var payload string
	require.NoError(t, b.pool.QueryRow(context.Background(),
		`SELECT payload::text FROM messages WHERE id = $1`, int64(got["id"].(float64))).Scan(&payload))
	require.Equal(t, `{"EDI_DC40":{"DOCNUM":"0000000064132944"},  "E1EDK01":{"BELNR":"4700000325"}}`, payload)
}

func TestReceiveSampleEnvelope(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.messageType(t, "ORDERS05", []string{"*.IDOC.E1EDK01.BELNR"}, nil)
	resp := b.post(t, readFile(t, "receive_message_envelope.json"))
	require.Equal(t, http.StatusCreated, resp.status, "%s", resp.body)
	require.Equal(t, "0000000000900101", resp.json(t)["docnum"])
}

func TestReceiveWithoutDocnumOrFingerprint(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.messageType(t, "SHOP_ORDER", nil, nil)
	body := []byte(`{"message_type":"SHOP_ORDER","payload":{"note":"no document number"}}`)
	for range 2 {
		resp := b.post(t, body)
		require.Equal(t, http.StatusCreated, resp.status, "%s", resp.body)
		got := resp.json(t)
		require.Nil(t, got["fingerprint"])
		require.Nil(t, got["docnum"])
	}
	require.Equal(t, 2, b.messages(t), "a message without fingerprint is stored, not deduplicated")
}

// The samples behave as their README says: resend and repeat output are
// duplicates under the business key; without paths only the resend is.
func TestReceiveSamplesByBusinessKey(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.messageType(t, "ORDERS05", []string{"*.IDOC.E1EDK01.BELNR"}, nil)

	first := b.post(t, envelopeFor(t, "ORDERS05", "orders05.json"))
	require.Equal(t, http.StatusCreated, first.status, "%s", first.body)
	originalID := first.json(t)["id"]

	for _, sample := range []string{"orders05_resent_same_docnum.json", "orders05_repeat_output_new_docnum.json"} {
		resp := b.post(t, envelopeFor(t, "ORDERS05", sample))
		require.Equal(t, http.StatusOK, resp.status, "%s: %s", sample, resp.body)
		require.Equal(t, "true", resp.header.Get("Idempotent-Replayed"))
		got := resp.json(t)
		require.Equal(t, true, got["duplicate"])
		require.Equal(t, originalID, got["duplicate_of"])
		require.Equal(t, originalID, got["id"])
		require.Equal(t, first.json(t)["fingerprint"], got["fingerprint"])
	}
	require.Equal(t, 1, b.messages(t))
	require.Equal(t, 2, b.blockedEvents(t))
}

func TestReceiveSamplesByDocnum(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.messageType(t, "ORDERS05", nil, nil)

	require.Equal(t, http.StatusCreated, b.post(t, envelopeFor(t, "ORDERS05", "orders05.json")).status)
	require.Equal(t, http.StatusOK, b.post(t, envelopeFor(t, "ORDERS05", "orders05_resent_same_docnum.json")).status)
	require.Equal(t, http.StatusCreated, b.post(t, envelopeFor(t, "ORDERS05", "orders05_repeat_output_new_docnum.json")).status)
	require.Equal(t, 2, b.messages(t))
	require.Equal(t, 1, b.blockedEvents(t))
}

func TestDuplicateAuditEventRecordsIdenticalOrChanged(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.messageType(t, "ORDERS05", []string{"*.IDOC.E1EDK01.BELNR"}, nil)
	first := b.post(t, envelopeFor(t, "ORDERS05", "orders05.json"))
	require.Equal(t, http.StatusCreated, first.status)
	original := first.json(t)

	require.Equal(t, http.StatusOK, b.post(t, envelopeFor(t, "ORDERS05", "orders05_resent_same_docnum.json")).status)
	require.Equal(t, http.StatusOK, b.post(t, envelopeFor(t, "ORDERS05", "orders05_changed_content_same_belnr.json")).status)
	require.Equal(t, http.StatusOK, b.post(t, envelopeFor(t, "ORDERS05", "orders05_e1edk02_as_array.json")).status)

	rows, err := b.pool.Query(context.Background(),
		`SELECT message_id, match_key, actor, details FROM audit_events
		 WHERE action = 'message.duplicate_blocked' ORDER BY id`)
	require.NoError(t, err)
	defer rows.Close()
	var contents []string
	for rows.Next() {
		var messageID int64
		var matchKey, actor string
		var raw []byte
		require.NoError(t, rows.Scan(&messageID, &matchKey, &actor, &raw))
		var d map[string]any
		require.NoError(t, json.Unmarshal(raw, &d))
		require.Equal(t, int64(original["id"].(float64)), messageID)
		require.Equal(t, original["fingerprint"], matchKey)
		require.True(t, strings.HasPrefix(actor, "api_key:"))
		require.Equal(t, "fingerprint", d["mode"])
		require.Equal(t, original["fingerprint"], d["fingerprint"])
		require.Equal(t, map[string]any{"id": original["id"], "docnum": "0000000000900101"}, d["original"])
		source := d["source"].(map[string]any)
		require.Equal(t, "receive-message", source["endpoint"])
		require.Equal(t, "127.0.0.1", source["remote_addr"])
		contents = append(contents, d["content"].(string))
	}
	require.NoError(t, rows.Err())
	require.Equal(t, []string{"identical", "changed", "shape_only"}, contents)
	require.Equal(t, 1, b.count(t, `SELECT count(*) FROM blocked_copies`), "only the changed copy is kept for review")
	require.Equal(t, 0, b.count(t, `SELECT count(*) FROM messages WHERE shape_hash IS NOT NULL`),
		"the original is its own shape form")
}

// The other way round: the original holds the one-item array, so it keeps
// its shape hash, and the copy with the plain object differs only in shape.
// A retransmission of the original itself stays identical.
func TestDuplicateOfAReshapedOriginalIsShapeOnly(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.messageType(t, "ORDERS05", []string{`[*.IDOC.E1EDK02]|@flatten|#(QUALF=="001").BELNR`}, nil)
	require.Equal(t, http.StatusCreated, b.post(t, envelopeFor(t, "ORDERS05", "orders05_e1edk02_as_array.json")).status)
	require.Equal(t, 1, b.count(t, `SELECT count(*) FROM messages WHERE shape_hash IS NOT NULL AND shape_hash <> content_hash`))
	require.Equal(t, http.StatusOK, b.post(t, envelopeFor(t, "ORDERS05", "orders05.json")).status)
	require.Equal(t, http.StatusOK, b.post(t, envelopeFor(t, "ORDERS05", "orders05_e1edk02_as_array.json")).status)
	require.Equal(t, http.StatusOK, b.post(t, envelopeFor(t, "ORDERS05", "orders05_changed_content_same_belnr.json")).status)
	var contents []string
	require.NoError(t, b.pool.QueryRow(t.Context(), `SELECT array_agg(details->>'content' ORDER BY id) FROM audit_events
		WHERE action = 'message.duplicate_blocked'`).Scan(&contents))
	require.Equal(t, []string{"shape_only", "identical", "changed"}, contents)
	require.Equal(t, 1, b.count(t, `SELECT count(*) FROM blocked_copies`))
}

func TestReceiveIdempotencyKey(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.messageType(t, "ORDERS05", []string{"*.IDOC.E1EDK01.BELNR"}, nil)
	body := envelopeFor(t, "ORDERS05", "orders05.json")

	first := b.post(t, body, "Idempotency-Key", "order-4500012345-v1")
	require.Equal(t, http.StatusCreated, first.status, "%s", first.body)

	// The same content with other key order and whitespace is the same request.
	var loose map[string]any
	require.NoError(t, json.Unmarshal(body, &loose))
	reordered, err := json.MarshalIndent(loose, "", "   ")
	require.NoError(t, err)
	again := b.post(t, reordered, "Idempotency-Key", "order-4500012345-v1")
	require.Equal(t, http.StatusOK, again.status, "%s", again.body)
	require.Equal(t, "true", again.header.Get("Idempotent-Replayed"))
	require.Equal(t, string(first.body), string(again.body), "a replay returns the original body")

	// With a key there is no fingerprint check: a new key stores the same order again.
	other := b.post(t, body, "Idempotency-Key", "order-4500012345-v2")
	require.Equal(t, http.StatusCreated, other.status, "%s", other.body)
	require.Equal(t, 2, b.messages(t))

	var d map[string]any
	var raw []byte
	require.NoError(t, b.pool.QueryRow(context.Background(),
		`SELECT details FROM audit_events WHERE action = 'message.duplicate_blocked'`).Scan(&raw))
	require.NoError(t, json.Unmarshal(raw, &d))
	require.Equal(t, "idempotency_key", d["mode"])
	require.Equal(t, "order-4500012345-v1", d["idempotency_key"])
	require.Equal(t, "identical", d["content"])
}

func TestReceiveIdempotencyKeyReusedForOtherContent(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.messageType(t, "ORDERS05", nil, nil)
	b.messageType(t, "INVOIC02", nil, nil)
	require.Equal(t, http.StatusCreated,
		b.post(t, []byte(`{"message_type":"ORDERS05","docnum":"1","payload":{"a":1}}`), "Idempotency-Key", "k").status)

	for name, body := range map[string]string{
		"other payload":      `{"message_type":"ORDERS05","docnum":"1","payload":{"a":2}}`,
		"other docnum":       `{"message_type":"ORDERS05","docnum":"2","payload":{"a":1}}`,
		"other message type": `{"message_type":"INVOIC02","docnum":"1","payload":{"a":1}}`,
	} {
		resp := b.post(t, []byte(body), "Idempotency-Key", "k")
		require.Equal(t, http.StatusUnprocessableEntity, resp.status, name)
		require.Equal(t, "application/problem+json", resp.header.Get("Content-Type"))
		require.Equal(t, "idempotency-key-reused", resp.json(t)["type"], name)
		require.Equal(t, "k", resp.json(t)["idempotency_key"], name)
	}
	require.Equal(t, 1, b.messages(t))
	require.Equal(t, 0, b.blockedEvents(t))
}

func TestIdempotencyKeyExpires(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.messageType(t, "ORDERS05", nil, nil)
	first := []byte(`{"message_type":"ORDERS05","docnum":"1","payload":{"a":1}}`)
	require.Equal(t, http.StatusCreated, b.post(t, first, "Idempotency-Key", "k").status)
	require.Equal(t, http.StatusOK, b.post(t, first, "Idempotency-Key", "k").status)

	_, err := b.pool.Exec(context.Background(), `UPDATE idempotency_keys SET expires_at = now() - interval '1 second'`)
	require.NoError(t, err)

	// After its retention the key is free, even for other content.
	resp := b.post(t, []byte(`{"message_type":"ORDERS05","docnum":"2","payload":{"a":2}}`), "Idempotency-Key", "k")
	require.Equal(t, http.StatusCreated, resp.status, "%s", resp.body)
	require.Equal(t, 2, b.messages(t))
	require.Equal(t, http.StatusOK,
		b.post(t, []byte(`{"message_type":"ORDERS05","docnum":"2","payload":{"a":2}}`), "Idempotency-Key", "k").status)
}

func TestIdempotencyKeyTTLFromConfig(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.messageType(t, "ORDERS05", nil, nil)
	require.Equal(t, http.StatusCreated,
		b.post(t, []byte(`{"message_type":"ORDERS05","payload":{}}`), "Idempotency-Key", "k").status)
	var hours float64
	require.NoError(t, b.pool.QueryRow(context.Background(),
		`SELECT extract(epoch FROM expires_at - created_at) / 3600 FROM idempotency_keys`).Scan(&hours))
	require.InDelta(t, 168, hours, 0.01)
}

func TestFingerprintWindowEdges(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.messageType(t, "ORDERS05", []string{"*.IDOC.E1EDK01.BELNR"}, ptr(2))
	ctx := context.Background()

	first := b.post(t, envelopeFor(t, "ORDERS05", "orders05.json"))
	require.Equal(t, http.StatusCreated, first.status)
	firstID := first.json(t)["id"]

	// Just inside the two-hour window: still a duplicate.
	_, err := b.pool.Exec(ctx, `UPDATE messages SET received_at = now() - interval '1 hour 59 minutes'`)
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, b.post(t, envelopeFor(t, "ORDERS05", "orders05_repeat_output_new_docnum.json")).status)

	// Just outside: stored, and the new message takes the fingerprint over.
	_, err = b.pool.Exec(ctx, `UPDATE messages SET received_at = now() - interval '2 hours 1 minute'`)
	require.NoError(t, err)
	second := b.post(t, envelopeFor(t, "ORDERS05", "orders05_repeat_output_new_docnum.json"))
	require.Equal(t, http.StatusCreated, second.status, "%s", second.body)
	require.Equal(t, first.json(t)["fingerprint"], second.json(t)["fingerprint"])

	// Later retransmissions match the new message; the old one still shows its fingerprint.
	third := b.post(t, envelopeFor(t, "ORDERS05", "orders05_resent_same_docnum.json"))
	require.Equal(t, http.StatusOK, third.status)
	require.Equal(t, second.json(t)["id"], third.json(t)["duplicate_of"])
	require.Equal(t, 2, b.messages(t))
	var computed string
	var claim *string
	require.NoError(t, b.pool.QueryRow(ctx,
		`SELECT computed_fingerprint, fingerprint FROM messages WHERE id = $1`, int64(firstID.(float64))).Scan(&computed, &claim))
	require.Equal(t, first.json(t)["fingerprint"], computed)
	require.Nil(t, claim)
}

// A window saved in the type editor applies to the very next message,
// although the key's lookup is cached; with the cache off
// (API_KEY_CACHE_TTL=0), so does a window changed by SQL, as before the
// cache existed.
func TestChangedWindowAppliesAtOnce(t *testing.T) {
	t.Parallel()
	for name, tc := range map[string]struct {
		ttl    string
		change func(t *testing.T, b *testBundle, id int64)
	}{
		"type editor": {ttl: "", change: func(t *testing.T, b *testBundle, id int64) {
			c := b.signedIn(t, "admin@acme.example", auth.RoleAdmin, "acme")
			c.get(pagePath(id))
			saved := c.submit(pagePath(id), url.Values{"path": {"*.IDOC.E1EDK01.BELNR"}, "window": {"2"}, "op": {"save"}, "version": {"1"}})
			require.Equal(t, http.StatusSeeOther, saved.status, "%s", saved.body)
		}},
		"no cache, SQL": {ttl: "0", change: func(t *testing.T, b *testBundle, id int64) {
			_, err := b.pool.Exec(t.Context(), `UPDATE message_types SET duplicate_window_hours = 2 WHERE id = $1`, id)
			require.NoError(t, err)
		}},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			b := setupCacheTTL(t, tc.ttl)
			mtID := b.messageType(t, "ORDERS05", []string{"*.IDOC.E1EDK01.BELNR"}, nil)
			require.Equal(t, http.StatusCreated, b.post(t, envelopeFor(t, "ORDERS05", "orders05.json")).status)
			_, err := b.pool.Exec(t.Context(), `UPDATE messages SET received_at = now() - interval '3 hours'`)
			require.NoError(t, err)
			require.Equal(t, http.StatusOK, b.post(t, envelopeFor(t, "ORDERS05", "orders05.json")).status, "inside the default 168 h")

			tc.change(t, b, mtID)
			require.Equal(t, http.StatusCreated, b.post(t, envelopeFor(t, "ORDERS05", "orders05.json")).status, "outside the new 2 h")
		})
	}
}

func TestEnvironmentsAndTenantsAreIsolated(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.messageType(t, "ORDERS05", []string{"*.IDOC.E1EDK01.BELNR"}, nil)
	testfactory.Environment(t, b.pool, &testfactory.EnvironmentOpts{Slug: "sandbox"})
	sandboxKey := testfactory.APIKey(t, b.pool, &testfactory.APIKeyOpts{Environment: "sandbox"})

	body := envelopeFor(t, "ORDERS05", "orders05.json")
	require.Equal(t, http.StatusCreated, b.post(t, body).status)
	sandbox := &testBundle{pool: b.pool, url: b.url, apiKey: sandboxKey}
	require.Equal(t, http.StatusCreated, sandbox.post(t, body).status, "the same document in another environment is stored again")
	require.Equal(t, http.StatusCreated, sandbox.post(t, body, "Idempotency-Key", "k").status)
	require.Equal(t, http.StatusCreated, b.post(t, body, "Idempotency-Key", "k").status, "keys are scoped per environment")

	// Another tenant neither sees acme's message types nor its messages.
	testfactory.TenantWithEnvironment(t, b.pool, "globex")
	globexKey := testfactory.APIKey(t, b.pool, &testfactory.APIKeyOpts{Tenant: "globex"})
	globex := &testBundle{pool: b.pool, url: b.url, apiKey: globexKey}
	resp := globex.post(t, body)
	require.Equal(t, http.StatusUnprocessableEntity, resp.status)
	require.Equal(t, "unknown-message-type", resp.json(t)["type"])
	testfactory.MessageType(t, b.pool, &testfactory.MessageTypeOpts{Tenant: "globex", Fields: []string{"*.IDOC.E1EDK01.BELNR"}})
	require.Equal(t, http.StatusCreated, globex.post(t, body).status)
	require.Equal(t, 5, b.messages(t))
}

// The IETF draft's Structured Field form of Idempotency-Key names the same
// key as the bare token most clients send; a malformed quoted string is 400.
func TestIdempotencyKeyStructuredFieldString(t *testing.T) {
	t.Parallel()
	var draft struct {
		ExampleHeader string `json:"example_header"`
		ExampleKey    string `json:"example_key"`
	}
	require.NoError(t, json.Unmarshal(readFile(t, "idempotency_key_draft.json"), &draft))
	b := setup(t)
	b.messageType(t, "ORDERS05", nil, nil)
	body := []byte(`{"message_type":"ORDERS05","docnum":"1","payload":{"a":1}}`)

	first := b.post(t, body, "Idempotency-Key", draft.ExampleHeader)
	require.Equal(t, http.StatusCreated, first.status, "%s", first.body)
	bare := b.post(t, body, "Idempotency-Key", draft.ExampleKey)
	require.Equal(t, http.StatusOK, bare.status, "%s", bare.body)
	require.Equal(t, string(first.body), string(bare.body))
	require.Equal(t, 1, b.count(t, `SELECT count(*) FROM idempotency_keys WHERE key = $1`, draft.ExampleKey))

	escaped := b.post(t, body, "Idempotency-Key", `"a \"quoted\" \\ key"`)
	require.Equal(t, http.StatusCreated, escaped.status, "%s", escaped.body)
	require.Equal(t, 1, b.count(t, `SELECT count(*) FROM idempotency_keys WHERE key = $1`, `a "quoted" \ key`))

	for _, value := range []string{`"unterminated`, `"a"b`, `"a\nb"`, `"a\"`, `""`, `"a";p=1`} {
		p := requireProblem(t, b.post(t, body, "Idempotency-Key", value), http.StatusBadRequest, "invalid-idempotency-key")
		require.Contains(t, p["detail"], "Idempotency-Key", value)
	}
	require.Equal(t, 2, b.messages(t))
}
