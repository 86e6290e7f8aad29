package server_test

import (
	"bytes"
	"fmt"
	"net/http"
	"net/url"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"
	"github.com/stretchr/testify/require"

	"github.com/lefia/edihub/internal/auth"
	"github.com/lefia/edihub/internal/fingerprint"
	"github.com/lefia/edihub/internal/typeeditor"
)

// htmxSettled waits until htmx has no request in flight and has settled
// the last swap: new buttons get their hx-post only then, and a click
// before that would submit the form natively.
var htmxSettled = chromedp.Poll[chromedp.Void](`document.querySelector('.htmx-request, .htmx-swapping, .htmx-settling, .htmx-added') === null`)

// previewValues are the values the preview lists, in the order of the paths.
const previewValues = `Array.from(document.querySelectorAll('#preview-values tr.preview-value'), r => r.cells[0].textContent + ' = ' + r.cells[1].textContent)`

// An admin edits the paths of a message type (adds one, moves it up,
// removes one, fills a preset), watches the preview follow, gets field
// errors for bad input, saves, finds the change in the audit log, and
// ingest dedups with the new paths at once.
func TestBrowserAdminEditsMessageTypePaths(t *testing.T) {
	t.Parallel()
	site := newAdminSite(t)
	email := site.user(t, "admin@acme.example", auth.RoleAdmin, "")
	id := site.typeID(t, "acme", "ORDERS05")
	var stored string
	require.NoError(t, site.pool.QueryRow(t.Context(), `SELECT computed_fingerprint FROM messages WHERE id = $1`, site.original).Scan(&stored))

	b := newBrowser(t)
	b.signIn(t, site.url, "/admin/message-types", email)
	b.do(t,
		chromedp.Click(chromedp.CSS(`tr.type[data-tenant="acme"] a.edit-type`)),
		chromedp.WaitVisible(chromedp.CSS(`#preview-fingerprint`)),
	)
	require.Equal(t, site.url+pagePath(id), b.location(t))
	require.Equal(t, stored, eval[string](t, b, `document.querySelector('#preview-fingerprint').textContent`),
		"the preview of the stored message is the fingerprint ingest stored")
	require.Equal(t, []string{`*.IDOC.E1EDK01.BELNR = "4500012345"`}, eval[[]string](t, b, previewValues))

	// Add a path: htmx swaps in the edited list with the new input focused,
	// and the preview follows the typing.
	b.do(t,
		chromedp.Click(chromedp.CSS(`#add-path`)),
		chromedp.Poll[chromedp.Void](`document.activeElement.id === 'path-1'`),
		chromedp.SendKeys(chromedp.CSS(`#path-1`), "*.IDOC.EDI_DC40.MESTYP"),
		// The preview refreshes 400 ms after the last key; on a busy machine
		// the keys come slower than that, so wait for the preview of the
		// whole path, not of a part of it.
		chromedp.Poll[chromedp.Void](`document.querySelectorAll('#preview-values tr.preview-value')[1]?.cells[0].textContent === '*.IDOC.EDI_DC40.MESTYP'`),
		htmxSettled,
	)
	require.Equal(t, []string{`*.IDOC.E1EDK01.BELNR = "4500012345"`, `*.IDOC.EDI_DC40.MESTYP = "ORDERS"`}, eval[[]string](t, b, previewValues))
	require.NotEqual(t, stored, eval[string](t, b, `document.querySelector('#preview-fingerprint').textContent`))
	require.True(t, eval[bool](t, b, `document.querySelector('#preview-differs') !== null`), "a repeat would no longer match the stored message")
	require.Equal(t, "This change would have blocked 0 of the last 1 message.", eval[string](t, b, `document.querySelector('#impact-summary').textContent`))

	// Enter in a path refreshes the editor with htmx; it does not save.
	b.do(t,
		chromedp.Evaluate[chromedp.Void](`document.querySelector('#editor').dataset.before = 'enter'`),
		chromedp.SendKeys(chromedp.CSS(`#path-1`), kb.Enter),
		chromedp.Poll[chromedp.Void](`document.querySelector('#editor').dataset.before === undefined`),
		htmxSettled,
	)
	require.Equal(t, site.url+pagePath(id), b.location(t))
	require.Equal(t, `["*.IDOC.E1EDK01.BELNR"]`, site.typePaths(t, id))

	// Move the new path up, then remove the order number.
	b.do(t,
		chromedp.Click(chromedp.CSS(`button[value="up:1"]`)),
		chromedp.Poll[chromedp.Void](`document.querySelector('#path-0').value === '*.IDOC.EDI_DC40.MESTYP'`),
		htmxSettled,
	)
	require.Equal(t, []string{`*.IDOC.EDI_DC40.MESTYP = "ORDERS"`, `*.IDOC.E1EDK01.BELNR = "4500012345"`}, eval[[]string](t, b, previewValues))
	b.do(t,
		chromedp.Click(chromedp.CSS(`button[value="remove:1"]`)),
		chromedp.Poll[chromedp.Void](`document.querySelectorAll('input[name=path]').length === 1`),
		htmxSettled,
	)
	require.Equal(t, []string{`*.IDOC.EDI_DC40.MESTYP = "ORDERS"`}, eval[[]string](t, b, previewValues))
	require.Equal(t, []string{"*.IDOC.EDI_DC40.MESTYP", "1 of 1", "100.0 %"},
		eval[[]string](t, b, `Array.from(document.querySelector('#impact-paths tr.impact-path').cells, c => c.textContent)`),
		"the path matched the one stored message")

	// The preset fills both paths back in.
	b.do(t,
		chromedp.Click(chromedp.CSS(`#preset-orders05`)),
		chromedp.Poll[chromedp.Void](`document.querySelectorAll('input[name=path]').length === 2`),
		htmxSettled,
	)
	require.Equal(t, []string{`*.IDOC.EDI_DC40.MESTYP = "ORDERS"`, `*.IDOC.E1EDK01.BELNR = "4500012345"`}, eval[[]string](t, b, previewValues))

	// Bad input: the preview lists the problems while typing, and a save
	// shows each next to its field, with what was typed.
	b.do(t,
		chromedp.SendKeys(chromedp.CSS(`#window`), "0"),
		chromedp.SendKeys(chromedp.CSS(`#path-1`), kb.End+")"),
		chromedp.Poll[chromedp.Void](`document.querySelectorAll('#preview-problems li').length === 2`),
		htmxSettled,
		chromedp.Click(chromedp.CSS(`#save-type`)),
		chromedp.WaitVisible(chromedp.CSS(`#window-problem`)),
	)
	require.Equal(t, "duplicate_window_hours must be between 1 and 87600, or unset for the default of 168",
		eval[string](t, b, `document.querySelector('#window-problem').textContent`))
	require.Contains(t, eval[string](t, b, `document.querySelector('#path-1-problem').textContent`), "')' must be escaped in a key")
	require.Equal(t, "*.IDOC.E1EDK01.BELNR)", eval[string](t, b, `document.querySelector('#path-1').value`))
	require.Equal(t, "true", eval[string](t, b, `document.querySelector('#window').getAttribute('aria-invalid')`))
	require.Equal(t, `["*.IDOC.E1EDK01.BELNR"]`, site.typePaths(t, id), "nothing saved")

	// Fixed, the change saves.
	b.do(t,
		chromedp.SetValue(chromedp.CSS(`#window`), "48"),
		chromedp.SetValue(chromedp.CSS(`#path-1`), "*.IDOC.E1EDK01.BELNR"),
		chromedp.Click(chromedp.CSS(`#save-type`)),
		chromedp.WaitVisible(chromedp.CSS(`#type-saved`)),
	)
	require.Equal(t, site.url+pagePath(id)+"?saved=2", b.location(t))
	require.JSONEq(t, `["*.IDOC.EDI_DC40.MESTYP", "*.IDOC.E1EDK01.BELNR"]`, site.typePaths(t, id))
	require.Equal(t, 48, site.count(t, `SELECT duplicate_window_hours FROM message_types WHERE id = $1`, id))

	// The audit log has the change, with before and after.
	b.do(t,
		chromedp.Navigate(site.url+"/admin/audit?action=message_type.updated"),
		chromedp.WaitVisible(chromedp.CSS(`tr.event`)),
	)
	require.Equal(t, 1, eval[int](t, b, `document.querySelectorAll('tr.event').length`))
	actor := eval[string](t, b, `document.querySelector('tr.event small.actor').textContent`)
	require.Contains(t, actor, "user:")
	details := eval[string](t, b, `document.querySelector('tr.event td.details').textContent`)
	require.Contains(t, details, `before {"duplicate_key_fields": ["*.IDOC.E1EDK01.BELNR"], "duplicate_window_hours": null}`)
	require.Contains(t, details, `after {"duplicate_key_fields": ["*.IDOC.EDI_DC40.MESTYP", "*.IDOC.E1EDK01.BELNR"], "duplicate_window_hours": 48}`)

	// Ingest reads the new paths at once: the order change of the stored
	// order, the same BELNR, was a duplicate under the old paths and is a
	// message of its own now, fingerprinted as the preview computes.
	change := bytes.Replace(readFile(t, "orders05.json"), []byte(`"MESTYP": "ORDERS"`), []byte(`"MESTYP": "ORDCHG"`), 1)
	first := site.post(t, envelopeOf(t, "ORDERS05", change))
	require.Equal(t, http.StatusCreated, first.status, "%s", first.body)
	want, err := fingerprint.Compute(fingerprint.Input{
		MessageTypeID: id, Paths: []string{"*.IDOC.EDI_DC40.MESTYP", "*.IDOC.E1EDK01.BELNR"}, Docnum: "0000000000900101", Payload: change,
	})
	require.NoError(t, err)
	require.Equal(t, want.Fingerprint, first.json(t)["fingerprint"])
	again := site.post(t, envelopeOf(t, "ORDERS05", change))
	require.Equal(t, http.StatusOK, again.status, "%s", again.body)
	require.Equal(t, true, again.json(t)["duplicate"])
	require.Zero(t, b.dialogs.Load())
}

// Two admins edit the same type. The second save is refused with the
// stored values next to the admin's own, nothing is lost, and only a
// deliberate second save replaces the other admin's change.
func TestBrowserSecondSaveOfOneVersionIsRefused(t *testing.T) {
	t.Parallel()
	site := newAdminSite(t)
	first := site.signedIn(t, "first@acme.example", auth.RoleAdmin, "acme")
	second := site.user(t, "second@acme.example", auth.RoleAdmin, "")
	id := site.typeID(t, "acme", "ORDERS05")

	// Both open the editor at version 1.
	b := newBrowser(t)
	b.signIn(t, site.url, pagePath(id), second)
	first.get(pagePath(id))

	// The first admin saves a window of 48 hours.
	resp := first.submit(pagePath(id), url.Values{"path": {"*.IDOC.E1EDK01.BELNR"}, "window": {"48"}, "version": {"1"}, "op": {"save"}})
	require.Equal(t, http.StatusSeeOther, resp.status, "%s", resp.body)

	// The second adds a path and saves over version 1: refused.
	b.do(t,
		chromedp.Click(chromedp.CSS(`#add-path`)),
		chromedp.WaitVisible(chromedp.CSS(`#path-1`)),
		htmxSettled,
		chromedp.SendKeys(chromedp.CSS(`#path-1`), "*.IDOC.EDI_DC40.MESTYP"),
		chromedp.Click(chromedp.CSS(`#save-type`)),
		chromedp.WaitVisible(chromedp.CSS(`#type-conflict`)),
	)
	require.Contains(t, eval[string](t, b, `document.querySelector('#type-conflict').textContent`), typeeditor.StaleMessage)
	require.Equal(t, "48 h", eval[string](t, b, `document.querySelector('#conflict-window').textContent`), "the stored values are shown")
	require.Equal(t, []string{"*.IDOC.E1EDK01.BELNR", "*.IDOC.EDI_DC40.MESTYP"},
		eval[[]string](t, b, `Array.from(document.querySelectorAll('input[name=path]'), i => i.value)`), "the admin's values are kept")
	require.Equal(t, "", eval[string](t, b, `document.querySelector('#window').value`))
	require.Equal(t, "2", eval[string](t, b, `document.querySelector('input[name=version]').value`))
	require.Equal(t, 48, site.count(t, `SELECT duplicate_window_hours FROM message_types WHERE id = $1`, id), "the first change is kept")
	require.Equal(t, `["*.IDOC.E1EDK01.BELNR"]`, site.typePaths(t, id))
	require.Equal(t, 1, site.updatedEvents(t))

	// Having seen both, the second admin saves again on purpose.
	b.do(t,
		chromedp.Click(chromedp.CSS(`#save-type`)),
		chromedp.WaitVisible(chromedp.CSS(`#type-saved`)),
	)
	require.JSONEq(t, `["*.IDOC.E1EDK01.BELNR", "*.IDOC.EDI_DC40.MESTYP"]`, site.typePaths(t, id))
	require.Equal(t, 0, site.count(t, `SELECT count(*) FROM message_types WHERE id = $1 AND duplicate_window_hours IS NOT NULL`, id))
	require.Equal(t, 2, site.updatedEvents(t))
	require.Equal(t, 3, site.count(t, `SELECT version FROM message_types WHERE id = $1`, id))

	// The first admin, still at version 2, is refused in turn.
	resp = first.submit(pagePath(id), url.Values{"path": {"id"}, "version": {"2"}, "op": {"save"}})
	require.Equal(t, http.StatusConflict, resp.status)
	require.Contains(t, string(resp.body), `id="type-conflict"`)
	require.Equal(t, 2, site.updatedEvents(t))
	require.Zero(t, b.dialogs.Load())
}

// envelopeOf wraps a payload in a receive-message body.
func envelopeOf(t *testing.T, messageType string, payload []byte) []byte {
	t.Helper()
	return []byte(fmt.Sprintf(`{"message_type": %q, "payload": %s}`, messageType, payload))
}
