package server_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/lefia/edihub/internal/auth"
	"github.com/lefia/edihub/internal/provision"
)

// The key paths that took the server down before key paths had a grammar:
// multipaths chained with pipes multiply their output at every stage, and
// @pretty|@ugly rewrites the whole payload at every stage.
var (
	outOfMemoryPath = strings.Repeat("[@this,@this,@this,@this]|", 13) + "id"
	amplifierPath   = strings.Repeat("[@this,@this]|", 8) + "id"
)

// cpuHeavyPaths are 32 distinct paths of pretty-printing and compacting.
func cpuHeavyPaths() []string {
	paths := make([]string, 32)
	for i := range paths {
		paths[i] = "@pretty|@ugly|@pretty|@ugly|" + strings.Repeat("@this|", i) + "id"
	}
	return paths
}

// largeEnvelope is a receive-message body for messageType whose payload is
// about size bytes: an id and items.
func largeEnvelope(t *testing.T, messageType string, size int) []byte {
	t.Helper()
	var items []string
	for n := 0; n*40 < size; n++ {
		items = append(items, fmt.Sprintf(`{"sku":"SKU-%07d","qty":%d}`, n, n%9+1))
	}
	payload := `{"id":"ORDER-1","items":[` + strings.Join(items, ",") + `]}`
	body, err := json.Marshal(map[string]any{"message_type": messageType, "payload": json.RawMessage(payload)})
	require.NoError(t, err)
	return body
}

// storePathsUnchecked writes paths the way a type saved before the
// key-path grammar holds them, bypassing every check.
func (b *testBundle) storePathsUnchecked(t *testing.T, id int64, paths ...string) {
	t.Helper()
	raw, err := json.Marshal(paths)
	require.NoError(t, err)
	_, err = b.pool.Exec(t.Context(), `UPDATE message_types SET duplicate_key_fields = $1 WHERE id = $2`, raw, id)
	require.NoError(t, err)
}

func TestKeyPathAmplifiersAreRefusedByThePreview(t *testing.T) {
	t.Parallel()
	site := newAdminSite(t)
	c := site.signedIn(t, "admin@acme.example", auth.RoleAdmin, "")
	c.get("/admin/message-types/new")
	sample := string(largeEnvelope(t, "X", 16<<10))
	sample = sample[strings.Index(sample, `{"id"`) : len(sample)-1]
	resp := c.submit("/admin/message-types/new/preview", url.Values{"path": {outOfMemoryPath}, "sample_payload": {sample}})
	require.Equal(t, http.StatusOK, resp.status)
	require.Contains(t, string(resp.body),
		`is refused: at position 2, @this is not allowed: a key path may use only @flatten (rule &#34;modifiers&#34;)`)
	require.Contains(t, string(resp.body), "Nothing to preview until these are fixed")
}

func TestKeyPathAmplifiersAreRefusedOnSave(t *testing.T) {
	t.Parallel()
	site := newAdminSite(t)
	c := site.signedIn(t, "admin@acme.example", auth.RoleAdmin, "")
	c.get("/admin/message-types/new")
	types := site.count(t, `SELECT count(*) FROM message_types`)

	resp := c.submit("/admin/message-types", url.Values{"code": {"AMPLIFIED"}, "tenant": {"acme"}, "path": {amplifierPath}, "op": {"save"}})
	require.Equal(t, http.StatusBadRequest, resp.status)
	require.Contains(t, string(resp.body), `id="path-0-problem">path 1 of duplicate_key_fields (&#34;[@this,@this]|[@this,`)
	require.Contains(t, string(resp.body), `is refused: at position 2, @this is not allowed`)

	resp = c.submit("/admin/message-types", url.Values{"code": {"PRETTY"}, "tenant": {"acme"}, "path": cpuHeavyPaths(), "op": {"save"}})
	require.Equal(t, http.StatusBadRequest, resp.status)
	require.Contains(t, string(resp.body), `id="path-31-problem">path 32 of duplicate_key_fields`)
	require.Contains(t, string(resp.body), `is refused: at position 1, @pretty is not allowed`)

	id := site.typeID(t, "acme", "ORDERS05")
	c.get(pagePath(id))
	resp = c.submit(pagePath(id), url.Values{"path": {amplifierPath}, "op": {"save"}, "version": {"1"}})
	require.Equal(t, http.StatusBadRequest, resp.status)
	require.Equal(t, `["*.IDOC.E1EDK01.BELNR"]`, site.typePaths(t, id))
	require.Equal(t, types, site.count(t, `SELECT count(*) FROM message_types`))

	_, err := provision.New(site.pool).CreateMessageType(t.Context(), "acme",
		provision.MessageTypeSpec{Code: "PROVISIONED", Fields: []string{amplifierPath}})
	require.ErrorContains(t, err, "@this is not allowed")
}

// A type saved before the grammar keeps its paths; ingest answers 422
// naming the path's problem rather than evaluating it, and stores nothing.
func TestIngestRefusesStoredKeyPathsTheGrammarRefuses(t *testing.T) {
	t.Parallel()
	b := setup(t)
	id := b.messageType(t, "AMPLIFIED", []string{"id"}, nil)
	body := largeEnvelope(t, "AMPLIFIED", 1<<20)
	for _, paths := range [][]string{{amplifierPath}, cpuHeavyPaths()} {
		b.storePathsUnchecked(t, id, paths...)
		resp := b.post(t, body)
		require.Equal(t, http.StatusUnprocessableEntity, resp.status, "%s", resp.body)
		problem := resp.json(t)
		require.Equal(t, "key-path-refused", problem["type"])
		require.Contains(t, problem["detail"], "message type AMPLIFIED has a duplicate_key_fields path the key-path rules refuse")
		require.Contains(t, problem["detail"], "is not allowed: a key path may use only @flatten")
		require.Zero(t, b.messages(t))
	}
}

func TestIngestRefusesAKeyValueBeyondTheLimits(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.messageType(t, "WHOLE", []string{"items"}, nil)
	b.messageType(t, "SKUS", []string{"items.#.sku"}, nil)
	resp := b.post(t, largeEnvelope(t, "WHOLE", 1<<20))
	require.Equal(t, http.StatusUnprocessableEntity, resp.status, "%s", resp.body)
	require.Equal(t, "key-value-too-large", resp.json(t)["type"])
	require.Contains(t, resp.json(t)["detail"], "a key value may be at most 65536 bytes")
	resp = b.post(t, largeEnvelope(t, "SKUS", 100<<10))
	require.Equal(t, http.StatusUnprocessableEntity, resp.status, "%s", resp.body)
	require.Contains(t, resp.json(t)["detail"], "an array of more than 1000 elements")
	require.Zero(t, b.messages(t))
}

// The message page of a message whose type now holds an amplifier shows the
// problem and the payload, without evaluating the path.
func TestMessagePageRefusesStoredKeyPathsTheGrammarRefuses(t *testing.T) {
	t.Parallel()
	site := newAdminSite(t)
	id := site.messageType(t, "LARGE", []string{"id"}, nil)
	resp := site.post(t, largeEnvelope(t, "LARGE", 1<<20))
	require.Equal(t, http.StatusCreated, resp.status, "%s", resp.body)
	msg := int64(resp.json(t)["id"].(float64))
	c := site.signedIn(t, "viewer@acme.example", auth.RoleViewer, "acme")

	page := c.get(fmt.Sprintf("/admin/messages/%d", msg))
	require.Equal(t, http.StatusOK, page.status)
	require.Contains(t, string(page.body), `<mark title="id">&#34;ORDER-1&#34;</mark>`)

	site.storePathsUnchecked(t, id, amplifierPath)
	page = c.get(fmt.Sprintf("/admin/messages/%d", msg))
	require.Equal(t, http.StatusOK, page.status)
	require.Contains(t, string(page.body), "cannot compute a fingerprint for this payload")
	require.Contains(t, string(page.body), "@this is not allowed")
	require.NotContains(t, string(page.body), "<mark")
	require.Less(t, len(page.body), 4<<20, "the page is a small multiple of the payload")
}
