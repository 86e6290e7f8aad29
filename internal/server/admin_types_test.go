package server_test

import (
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/lefia/edihub/internal/auth"
)

// typeID is the id of a tenant's message type.
func (b *testBundle) typeID(t *testing.T, tenant, code string) int64 {
	t.Helper()
	return int64(b.count(t, `SELECT mt.id FROM message_types mt JOIN tenants t ON t.id = mt.tenant_id
		WHERE t.slug = $1 AND mt.code = $2`, tenant, code))
}

// typePaths is the stored duplicate_key_fields of a type, as JSON text.
func (b *testBundle) typePaths(t *testing.T, id int64) string {
	t.Helper()
	var paths string
	require.NoError(t, b.pool.QueryRow(t.Context(), `SELECT duplicate_key_fields::text FROM message_types WHERE id = $1`, id).Scan(&paths))
	return paths
}

var pathInput = regexp.MustCompile(`<input name="path" id="path-\d+" value="([^"]*)"`)

// formPaths are the values of a page's path inputs, in order.
func formPaths(body []byte) []string {
	var paths []string
	for _, m := range pathInput.FindAllSubmatch(body, -1) {
		paths = append(paths, string(m[1]))
	}
	return paths
}

// signedIn is a client signed in as a new user.
func (b *testBundle) signedIn(t *testing.T, email, role, tenant string) *adminClient {
	t.Helper()
	c := b.client(t)
	c.login(b.user(t, email, role, tenant))
	return c
}

// pagePath is a message type's editor.
func pagePath(id int64) string { return fmt.Sprintf("/admin/message-types/%d", id) }

// updatedEvents counts the saved changes of message types.
func (b *testBundle) updatedEvents(t *testing.T) int {
	return b.count(t, `SELECT count(*) FROM audit_events WHERE action = 'message_type.updated'`)
}

// A viewer lists the types of their tenant and gets no editing control; the
// editor's pages and posts are refused.
func TestMessageTypesViewerReadsOnly(t *testing.T) {
	t.Parallel()
	site := newAdminSite(t)
	c := site.signedIn(t, "viewer@acme.example", auth.RoleViewer, "acme")
	id := site.typeID(t, "acme", "ORDERS05")

	resp := c.get("/admin/message-types")
	require.Equal(t, http.StatusOK, resp.status)
	page := string(resp.body)
	require.Equal(t, 1, strings.Count(page, `<tr class="type"`), "only the tenant's own type")
	require.Contains(t, page, `<td class="received">1</td>`)
	require.Contains(t, page, `<a href="/admin/audit?action=message.duplicate_blocked&amp;message_type=ORDERS05&amp;tenant=acme">1</a>`)
	require.Contains(t, page, `<code>*.<wbr>IDOC.<wbr>E1EDK01.<wbr>BELNR<wbr></code>`, "the path breaks after a dot only")
	require.Contains(t, page, `168 h (the default)`)
	require.NotContains(t, page, `<th scope="col">Tenant</th>`)
	require.NotContains(t, page, `id="new-type"`)
	require.NotContains(t, page, `class="edit-type"`)
	require.Equal(t, 1, strings.Count(page, "<form"), "only the sign-out form")

	for _, path := range []string{"/admin/message-types/new", pagePath(id)} {
		require.Equal(t, http.StatusForbidden, c.get(path).status, path)
	}
	form := url.Values{"path": {"id"}, "op": {"save"}, "version": {"1"}, "code": {"X"}}
	for _, path := range []string{"/admin/message-types", pagePath(id), pagePath(id) + "/preview", "/admin/message-types/new/preview"} {
		resp := c.submit(path, form)
		require.Equal(t, http.StatusForbidden, resp.status, path)
		require.Contains(t, string(resp.body), "this needs the admin role")
	}
	require.Equal(t, `["*.IDOC.E1EDK01.BELNR"]`, site.typePaths(t, id))
	require.Zero(t, site.updatedEvents(t))
}

// A tenant's admin never reaches another tenant's type, and creates types
// in their own tenant only.
func TestMessageTypesTenantAdmin(t *testing.T) {
	t.Parallel()
	site := newAdminSite(t)
	c := site.signedIn(t, "admin@globex.example", auth.RoleAdmin, "globex")
	acmeType := site.typeID(t, "acme", "ORDERS05")

	resp := c.get("/admin/message-types")
	require.Equal(t, 1, strings.Count(string(resp.body), `<tr class="type"`))
	require.Contains(t, string(resp.body), fmt.Sprintf(`href="%s"`, pagePath(site.typeID(t, "globex", "ORDERS05"))))

	resp = c.get(pagePath(acmeType))
	require.Equal(t, http.StatusNotFound, resp.status)
	require.Contains(t, string(resp.body), fmt.Sprintf("there is no message type %d", acmeType))
	form := url.Values{"path": {"id"}, "op": {"save"}, "version": {"1"}}
	for _, path := range []string{pagePath(acmeType), pagePath(acmeType) + "/preview"} {
		require.Equal(t, http.StatusNotFound, c.submit(path, form).status, path)
	}
	require.Equal(t, `["*.IDOC.E1EDK01.BELNR"]`, site.typePaths(t, acmeType))

	resp = c.get("/admin/message-types/new")
	require.Equal(t, http.StatusOK, resp.status)
	require.NotContains(t, string(resp.body), `name="tenant"`)
	require.Contains(t, string(resp.body), "The message type will belong to tenant <strong>globex</strong>.")
	resp = c.submit("/admin/message-types", url.Values{"code": {"INVOIC02"}, "tenant": {"acme"}, "op": {"save"}})
	require.Equal(t, http.StatusSeeOther, resp.status, "%s", resp.body)
	require.Equal(t, 1, site.count(t, `SELECT count(*) FROM message_types mt JOIN tenants t ON t.id = mt.tenant_id
		WHERE mt.code = 'INVOIC02' AND t.slug = 'globex'`), "created in the admin's tenant, whatever the form said")
}

// Every button of the editor is a submit button: without JavaScript each
// edits the list of paths on the server and shows the form again, unsaved;
// only the save button saves.
func TestTypeEditorWithoutJavaScript(t *testing.T) {
	t.Parallel()
	site := newAdminSite(t)
	c := site.signedIn(t, "admin@acme.example", auth.RoleAdmin, "")
	id := site.typeID(t, "acme", "ORDERS05")
	resp := c.get(pagePath(id))
	require.Equal(t, http.StatusOK, resp.status)
	require.Equal(t, []string{"*.IDOC.E1EDK01.BELNR"}, formPaths(resp.body))
	require.Contains(t, string(resp.body), `<input type="hidden" name="version" value="1">`)

	post := func(op string, paths ...string) response {
		t.Helper()
		resp := c.submit(pagePath(id), url.Values{"path": paths, "op": {op}, "version": {"1"}, "window": {""}})
		require.Equal(t, http.StatusOK, resp.status, "%s", resp.body)
		require.Contains(t, string(resp.body), "<html", "the whole page")
		return resp
	}
	resp = post("add", "*.IDOC.E1EDK01.BELNR")
	require.Equal(t, []string{"*.IDOC.E1EDK01.BELNR", ""}, formPaths(resp.body))
	require.Contains(t, string(resp.body), `id="path-1" value="" aria-label="Path 2" autocomplete="off" spellcheck="false" placeholder="e.g. *.IDOC.E1EDK01.BELNR" autofocus`)
	require.NotRegexp(t, `class="problem" id="[^"]*">[^<]`, string(resp.body), "a path just added is no problem yet")
	require.Contains(t, string(resp.body), `<code id="preview-fingerprint">`)
	resp = post("up:1", "*.IDOC.E1EDK01.BELNR", "*.IDOC.EDI_DC40.MESTYP")
	require.Equal(t, []string{"*.IDOC.EDI_DC40.MESTYP", "*.IDOC.E1EDK01.BELNR"}, formPaths(resp.body))
	require.Regexp(t, `(?s)<code>\*\.IDOC\.EDI_DC40\.MESTYP</code>.*<code>&#34;ORDERS&#34;</code>.*<code>&#34;4500012345&#34;</code>`, string(resp.body))
	resp = post("down:0", "*.IDOC.EDI_DC40.MESTYP", "*.IDOC.E1EDK01.BELNR")
	require.Equal(t, []string{"*.IDOC.E1EDK01.BELNR", "*.IDOC.EDI_DC40.MESTYP"}, formPaths(resp.body))
	resp = post("remove:0", "*.IDOC.E1EDK01.BELNR", "*.IDOC.EDI_DC40.MESTYP")
	require.Equal(t, []string{"*.IDOC.EDI_DC40.MESTYP"}, formPaths(resp.body))
	resp = post("preset:invoic02", "x")
	require.Equal(t, []string{`[*.IDOC.E1EDK02]|@flatten|#(QUALF==&#34;009&#34;).BELNR`}, formPaths(resp.body))
	require.Equal(t, `["*.IDOC.E1EDK01.BELNR"]`, site.typePaths(t, id), "nothing saved")
	require.Zero(t, site.updatedEvents(t))

	// Problems are shown next to their fields, with what was typed.
	resp = c.submit(pagePath(id), url.Values{"path": {"*.IDOC.E1EDK01.BELNR", "#(QUALF"}, "window": {"100000"}, "op": {"save"}, "version": {"1"}})
	require.Equal(t, http.StatusBadRequest, resp.status)
	page := string(resp.body)
	require.Contains(t, page, `<small class="problem" id="window-problem">duplicate_window_hours must be between 1 and 87600, or unset for the default of 168</small>`)
	require.Contains(t, page, `<small class="problem" id="path-1-problem">path 2 of duplicate_key_fields (&#34;#(QUALF&#34;) is refused: at position 2, the &#39;(&#39; is not closed (rule &#34;syntax&#34;)</small>`)
	require.Contains(t, page, `name="window" id="window" value="100000"`)
	require.Equal(t, []string{"*.IDOC.E1EDK01.BELNR", "#(QUALF"}, formPaths(resp.body))
	require.Zero(t, site.updatedEvents(t))

	resp = c.submit(pagePath(id), url.Values{"path": {"*.IDOC.EDI_DC40.MESTYP", "*.IDOC.E1EDK01.BELNR"}, "window": {"48"}, "op": {"save"}, "version": {"1"}})
	require.Equal(t, http.StatusSeeOther, resp.status, "%s", resp.body)
	require.Equal(t, pagePath(id)+"?saved=2", resp.header.Get("Location"))
	require.JSONEq(t, `["*.IDOC.EDI_DC40.MESTYP", "*.IDOC.E1EDK01.BELNR"]`, site.typePaths(t, id))
	resp = c.get(pagePath(id) + "?saved=2")
	require.Contains(t, string(resp.body), `id="type-saved"`)
	require.Contains(t, string(resp.body), `<input type="hidden" name="version" value="2">`)
	require.NotContains(t, string(c.get(pagePath(id)+"?saved=1").body), `id="type-saved"`, "a crafted link claims nothing")
	require.Equal(t, 1, site.count(t, `SELECT count(*) FROM audit_events WHERE action = 'message_type.updated' AND actor LIKE 'user:%'`))
}

// htmx asks the preview endpoint for the editor's fields only.
func TestTypeEditorPreviewFragment(t *testing.T) {
	t.Parallel()
	site := newAdminSite(t)
	c := site.signedIn(t, "admin@acme.example", auth.RoleAdmin, "")
	id := site.typeID(t, "acme", "ORDERS05")
	c.get(pagePath(id))
	resp := c.submit(pagePath(id)+"/preview", url.Values{"path": {"*.IDOC.E1EDK01.BELNR"}, "op": {"add"}, "version": {"1"}})
	require.Equal(t, http.StatusOK, resp.status)
	body := string(resp.body)
	require.True(t, strings.HasPrefix(body, `<div id="editor">`), body)
	require.NotContains(t, body, "<html")
	require.Equal(t, []string{"*.IDOC.E1EDK01.BELNR", ""}, formPaths(resp.body))

	// The preview of the stored message under unchanged settings is the
	// fingerprint ingest stored for it.
	resp = c.submit(pagePath(id)+"/preview", url.Values{"path": {"*.IDOC.E1EDK01.BELNR"}, "version": {"1"}})
	var stored string
	require.NoError(t, site.pool.QueryRow(t.Context(), `SELECT computed_fingerprint FROM messages WHERE id = $1`, site.original).Scan(&stored))
	require.Contains(t, string(resp.body), `<code id="preview-fingerprint">`+stored+`</code>`)
	require.Contains(t, string(resp.body), "No change: these are the saved settings. Below is what they did to the last 1 message.")
	require.NotContains(t, string(resp.body), `id="unmatched-paths"`)

	// A changed proposal is compared with the saved settings; a path that
	// reads nothing in the sample is a warning above the tables.
	resp = c.submit(pagePath(id)+"/preview", url.Values{"path": {"*.IDOC.E1EDK01.BELNR", "*.IDOC.E1EDK01.NOPE"}, "version": {"1"}})
	require.Contains(t, string(resp.body), "This change would have blocked 0 of the last 1 message.")
	require.Contains(t, string(resp.body), `<article class="warning" id="unmatched-paths" role="alert"><header><strong>A proposed path matches 0 % of the sample messages</strong>`)
	require.Contains(t, string(resp.body), `<li><code>*.IDOC.E1EDK01.NOPE</code>: no value in the one message replayed</li>`)
	require.Contains(t, string(resp.body), `<tr class="impact-path unmatched" data-path-index="1"`)
	require.Contains(t, string(resp.body), `<small class="path-warning" id="path-1-unmatched">`, "the path is marked beside its input too")
	// The default window written out is a change: saving would store it.
	resp = c.submit(pagePath(id)+"/preview", url.Values{"path": {"*.IDOC.E1EDK01.BELNR"}, "window": {"168"}, "version": {"1"}})
	require.Contains(t, string(resp.body), "This change would have blocked 0 of the last 1 message.")

	// A problem is part of the answer, which htmx swaps only when it is 200.
	resp = c.submit(pagePath(id)+"/preview", url.Values{"path": {""}, "version": {"1"}})
	require.Equal(t, http.StatusOK, resp.status)
	require.Contains(t, string(resp.body), `<li data-field="path-0-problem">path 1 of duplicate_key_fields is empty</li>`)

	resp = c.submit("/admin/message-types/new/preview", url.Values{"path": {"id"}, "sample_payload": {`{"id": 6149}`}})
	require.Equal(t, http.StatusOK, resp.status)
	require.Contains(t, string(resp.body), `<code>&#34;6149&#34;</code>`)
	require.Contains(t, string(resp.body), "so it can be shown once the type is created")
	require.NotContains(t, string(resp.body), `id="preview-fingerprint"`)
}

func TestCreateMessageType(t *testing.T) {
	t.Parallel()
	site := newAdminSite(t)
	c := site.signedIn(t, "admin@acme.example", auth.RoleAdmin, "")
	resp := c.get("/admin/message-types/new")
	require.Equal(t, http.StatusOK, resp.status)
	require.Contains(t, string(resp.body), `<option value="globex">globex</option>`)

	resp = c.submit("/admin/message-types", url.Values{"code": {"SHOP ORDER"}, "path": {"id"}, "op": {"save"}})
	require.Equal(t, http.StatusBadRequest, resp.status)
	require.Contains(t, string(resp.body), `<small class="problem" id="tenant-problem">choose the tenant the message type belongs to</small>`)
	require.Contains(t, string(resp.body), `id="code-problem">message type code &#34;SHOP ORDER&#34; is not valid`)
	require.Contains(t, string(resp.body), `value="SHOP ORDER"`)

	resp = c.submit("/admin/message-types", url.Values{"code": {"ORDERS05"}, "tenant": {"acme"}, "op": {"save"}})
	require.Equal(t, http.StatusBadRequest, resp.status)
	require.Contains(t, string(resp.body), `id="code-problem">message type &#34;ORDERS05&#34; already exists in tenant &#34;acme&#34;</small>`)
	require.NotContains(t, string(resp.body), `id="preview-problems"`, "the settings are fine, so the preview is shown")

	resp = c.submit("/admin/message-types", url.Values{
		"code": {"SHOP_ORDER"}, "tenant": {"globex"}, "path": {"admin_graphql_api_id"}, "window": {"24"}, "op": {"save"},
	})
	require.Equal(t, http.StatusSeeOther, resp.status, "%s", resp.body)
	id := site.typeID(t, "globex", "SHOP_ORDER")
	require.Equal(t, pagePath(id)+"?saved=1", resp.header.Get("Location"))
	require.Equal(t, `["admin_graphql_api_id"]`, site.typePaths(t, id))
	resp = c.get(resp.header.Get("Location"))
	require.Contains(t, string(resp.body), `id="type-saved"`)
	require.Equal(t, 1, site.count(t, `SELECT count(*) FROM audit_events
		WHERE action = 'message_type.created' AND actor LIKE 'user:%' AND message_type_id = $1`, id))
}
