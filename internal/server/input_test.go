package server_test

import (
	"encoding/base64"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/lefia/edihub/internal/auth"
	"github.com/lefia/edihub/internal/testfactory"
)

// Any API key could grow the metrics and the log without end by sending
// made-up message types: each unique code became a metrics series, and a
// megabyte code was logged in full. Codes longer than a code can be are
// refused with 400 before they are logged or counted, and every code the
// tenant does not have is counted under one label.
func TestMessageTypesCannotGrowMetricsOrLogs(t *testing.T) {
	t.Parallel()
	o := observedServer(t, nil)
	o.messageType(t, "ORDERS05", nil, nil)
	before := len(o.scrape())

	for i := range 40 {
		huge := strings.Repeat("M", 1<<20) + fmt.Sprint(i)
		resp := o.post(t, []byte(`{"message_type":"`+huge+`","payload":{}}`))
		require.Equal(t, http.StatusBadRequest, resp.status)
		require.Equal(t, "invalid-field", resp.json(t)["type"])
		require.Less(t, len(resp.body), 1000, "the answer does not repeat the value")

		madeUp := o.post(t, []byte(fmt.Sprintf(`{"message_type":"MADE_UP_%d","payload":{}}`, i)))
		require.Equal(t, http.StatusUnprocessableEntity, madeUp.status)
	}
	text := o.scrape()
	require.Less(t, len(text)-before, 10_000, "40 + 40 bad requests add a handful of series, not 40 MB")
	require.NotContains(t, text, "MADE_UP_")
	require.Contains(t, text, `message_type="unknown",outcome="rejected",reason="unknown-message-type"`)
	require.Less(t, len(o.logs.String()), 200_000, "log lines of 80 requests stay small")
	require.Zero(t, o.messages(t))
}

// Text that PostgreSQL cannot hold (NUL, invalid UTF-8) or that would spoof
// an identifier (control and bidirectional characters) is refused at intake
// with 400, never a 500 that a sender would retry for ever.
func TestIdentifiersThatCannotBeStoredAreRefused(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.messageType(t, "ORDERS05", nil, nil)
	for _, docnum := range []string{`a\u0000b`, `4711\u202Egpj.exe`, `\u001b[2J4711`, `4711\r\nforged line`, `a\u2028b`} {
		resp := b.post(t, []byte(`{"message_type":"ORDERS05","docnum":"`+docnum+`","payload":{}}`))
		require.Equal(t, http.StatusBadRequest, resp.status, "%s: %s", docnum, resp.body)
		require.Equal(t, "invalid-field", resp.json(t)["type"])
	}
	resp := b.post(t, []byte(`{"message_type":"ORDERS05","payload":{"IDOC":{"EDI_DC40":{"DOCNUM":"1\u00002"}}}}`))
	require.Equal(t, http.StatusBadRequest, resp.status, "%s", resp.body)
	require.Contains(t, resp.json(t)["detail"], "EDI_DC40.DOCNUM")

	for _, query := range []string{"?x=%00", "?x=%ff", "?x=" + strings.Repeat("a", 3000)} {
		resp := do(t, http.MethodPost, b.url+"/api/edi-hub/receive-message"+query,
			http.Header{"Authorization": {"Bearer " + b.apiKey}, "Content-Type": {"application/json"}},
			[]byte(`{"message_type":"ORDERS05","docnum":"1","payload":{}}`))
		require.Equal(t, http.StatusBadRequest, resp.status, "%s", query)
		require.Equal(t, "invalid-parameter", resp.json(t)["type"])
	}
	require.Zero(t, b.messages(t))
	require.Equal(t, http.StatusCreated, b.post(t, []byte(`{"message_type":"ORDERS05","docnum":"1","payload":{}}`)).status)
}

// A lone surrogate escape is not a character: read leniently it becomes
// U+FFFD, and "4711\ud800" and "4711\udbff" would be one docnum. It is
// refused in a docnum, alone or in a batch, as it is in a payload.
func TestLoneSurrogatesAreRefusedInDocnums(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.messageType(t, "ORDERS05", nil, nil)
	for _, docnum := range []string{`4711\ud800`, `4711\udbff`, `\ude00\ud83d`} {
		resp := b.post(t, []byte(`{"message_type":"ORDERS05","docnum":"`+docnum+`","payload":{}}`))
		require.Equal(t, http.StatusBadRequest, resp.status, "%s: %s", docnum, resp.body)
		require.Equal(t, "invalid-field", resp.json(t)["type"])
		require.Contains(t, resp.json(t)["detail"], "lone surrogate")
	}
	resp := do(t, http.MethodPost, b.url+"/api/edi-hub/receive-messages",
		http.Header{"Authorization": {"Bearer " + b.apiKey}, "Content-Type": {"application/json"}},
		[]byte(`{"messages":[{"message_type":"ORDERS05","docnum":"1","payload":{}},{"message_type":"ORDERS05","docnum":"\udfff","payload":{}}]}`))
	require.Equal(t, http.StatusBadRequest, resp.status, "%s", resp.body)
	require.Equal(t, "invalid-batch", resp.json(t)["type"])
	require.Contains(t, string(resp.body), `"index":1,"type":"invalid-field"`)
	resp = b.post(t, []byte(`{"message_type":"ORDERS05","payload":{"EDI_DC40":{"DOCNUM":"4711\ud800"}}}`))
	require.Equal(t, http.StatusBadRequest, resp.status, "%s", resp.body)
	require.Equal(t, "invalid-payload", resp.json(t)["type"])
	require.Zero(t, b.messages(t))
	require.Equal(t, http.StatusCreated, b.post(t, []byte(`{"message_type":"ORDERS05","docnum":"4711\ud83d\ude00","payload":{}}`)).status)
}

// Admin filters and forms holding NUL bytes or invalid UTF-8, and a page
// cursor far outside PostgreSQL's timestamps, are a clear answer, never a
// 500.
func TestAdminInputThatCannotBeMatchedIsRefused(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.user(t, "root@example.com", auth.RoleAdmin, "")
	c := b.client(t)
	c.login("root@example.com")

	for _, query := range []string{"key=%00", "environment=%00", "message_type=%00", "tenant=%00", "action=%00", "from=%00"} {
		resp := c.get("/admin/audit?" + query)
		require.Equal(t, http.StatusBadRequest, resp.status, "%s: %s", query, resp.body)
		require.Contains(t, string(resp.body), "holds a NUL byte", query)
	}
	resp := c.get("/admin/audit?key=%ff")
	require.Equal(t, http.StatusBadRequest, resp.status, "%s", resp.body)
	require.Contains(t, string(resp.body), "not valid UTF-8")

	// Page cursors hold microseconds since 1970; these are hundreds of
	// thousands of years away, beyond PostgreSQL's timestamps.
	for _, far := range []string{"9223372036854775807.1", "-9223372036854775807.1", "253402300800000000.1"} {
		resp := c.get("/admin/audit?before=" + base64.RawURLEncoding.EncodeToString([]byte(far)))
		require.Equal(t, http.StatusOK, resp.status, "%s", resp.body)
		require.Contains(t, string(resp.body), "the page link is not valid", far)
	}

	// A sign-in or a new user with a NUL in the email is refused as input.
	other := b.client(t)
	other.get("/admin/login")
	resp = other.submit("/admin/login", map[string][]string{"email": {"a\x00@example.com"}, "password": {testfactory.Password}})
	require.Equal(t, http.StatusBadRequest, resp.status, "%s", resp.body)
	c.get("/admin/users")
	resp = c.submit("/admin/users", map[string][]string{"email": {"new\x00@example.com"}, "role": {"viewer"}, "password": {testfactory.Password}})
	require.Equal(t, http.StatusBadRequest, resp.status, "%s", resp.body)
}

// A docnum stored before intake refused control and bidirectional
// characters shows them as escapes on the admin pages, so that it cannot
// pose as another docnum or reorder the text around it.
func TestStoredInvisibleCharactersShowAsEscapes(t *testing.T) {
	t.Parallel()
	site := newAdminSite(t)
	_, err := site.pool.Exec(t.Context(), `UPDATE messages SET docnum = $1 WHERE id = $2`, "4711\u202Egpj.exe\x1b[2J", site.original)
	require.NoError(t, err)
	site.user(t, "root@example.com", auth.RoleAdmin, "")
	c := site.client(t)
	c.login("root@example.com")
	page := string(c.get(fmt.Sprintf("/admin/messages/%d", site.original)).body)
	require.Contains(t, page, `4711\u202egpj.exe\x1b[2J`)
	require.NotContains(t, page, "\u202E")
	require.NotContains(t, page, "\x1b")
}
