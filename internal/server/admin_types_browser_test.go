package server_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"
	"github.com/stretchr/testify/require"

	"github.com/lefia/edihub/internal/auth"
	"github.com/lefia/edihub/internal/fingerprint"
	"github.com/lefia/edihub/internal/messagetype"
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
	b.requireFitsWidth(t)
	b.screenshot(t, "admin_message_types")
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
	require.Equal(t, []string{messagetype.IDocORDERS05Paths[0] + ` = ["ORDERS"]`, `*.IDOC.E1EDK01.BELNR = "4500012345"`}, eval[[]string](t, b, previewValues))

	// Bad input: while typing, the preview lists the problems and each is
	// shown at its field too; a save shows each next to its field, with
	// what was typed.
	b.do(t,
		chromedp.SendKeys(chromedp.CSS(`#window`), "0"),
		chromedp.SendKeys(chromedp.CSS(`#path-1`), kb.End+")"),
		chromedp.Poll[chromedp.Void](`document.querySelectorAll('#preview-problems li').length === 2`),
		htmxSettled,
	)
	require.Contains(t, eval[string](t, b, `document.querySelector('#path-1-problem').textContent`), "')' must be escaped in a key",
		"the path's problem is shown at the path while typing")
	require.False(t, eval[bool](t, b, `document.querySelector('#path-1-problem').hidden`))
	require.True(t, eval[bool](t, b, `document.querySelector('#path-0-problem').hidden`), "the path without a problem shows none")
	b.screenshot(t, "admin_type_editor_problem_at_field")
	b.do(t,
		chromedp.Click(chromedp.CSS(`#save-type`)),
		// The problems are shown already; the page the save answers marks
		// the fields too.
		chromedp.WaitVisible(chromedp.CSS(`#window[aria-invalid="true"]`)),
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
	presetPaths, err := json.Marshal(messagetype.IDocORDERS05Paths)
	require.NoError(t, err)
	require.JSONEq(t, string(presetPaths), site.typePaths(t, id))
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
	require.Contains(t, details, `after {"duplicate_key_fields": `+strings.ReplaceAll(string(presetPaths), ",", ", ")+`, "duplicate_window_hours": 48}`)

	// Ingest reads the new paths at once: the order change of the stored
	// order, the same BELNR, was a duplicate under the old paths and is a
	// message of its own now, fingerprinted as the preview computes.
	change := bytes.Replace(readFile(t, "orders05.json"), []byte(`"MESTYP": "ORDERS"`), []byte(`"MESTYP": "ORDCHG"`), 1)
	first := site.post(t, envelopeOf(t, "ORDERS05", change))
	require.Equal(t, http.StatusCreated, first.status, "%s", first.body)
	want, err := fingerprint.Compute(fingerprint.Input{
		MessageTypeID: id, Paths: messagetype.IDocORDERS05Paths, Docnum: "0000000000900101", Payload: change,
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

// The editor says when nothing changed, keeps Save in the window on a
// page longer than it, and warns in a box above the tables about a
// proposed path that reads nothing in the sample.
func TestBrowserTypeEditorNoChangeStickySaveAndUnmatchedWarning(t *testing.T) {
	t.Parallel()
	site := newAdminSite(t)
	email := site.user(t, "admin@acme.example", auth.RoleAdmin, "")
	id := site.typeID(t, "acme", "ORDERS05")

	b := newBrowser(t)
	b.signIn(t, site.url, pagePath(id), email)
	b.do(t, chromedp.WaitVisible(chromedp.CSS(`#impact-summary`)))
	require.Equal(t, "No change: these are the saved settings. Below is what they did to the last 1 message.",
		eval[string](t, b, `document.querySelector('#impact-summary').textContent`))
	require.False(t, eval[bool](t, b, `document.querySelector('#unmatched-paths') !== null`))

	// Paths that read something, and one misspelt; the page grows well
	// beyond the window.
	for i, path := range []string{"*.IDOC.EDI_DC40.MESTYP", "*.IDOC.EDI_DC40.IDOCTYP", "*.IDOC.E1EDK01.CURCY", "*.IDOC.E1EDK01.BELNRR"} {
		// Centred, the button is clear of the bar stuck to the window's bottom.
		b.do(t,
			chromedp.Evaluate[chromedp.Void](`document.querySelector('#add-path').scrollIntoView({block: 'center'})`),
			chromedp.Click(chromedp.CSS(`#add-path`)),
			chromedp.Poll[chromedp.Void](fmt.Sprintf(`document.activeElement.id === 'path-%d'`, i+1)),
			chromedp.SendKeys(chromedp.CSS(fmt.Sprintf(`#path-%d`, i+1)), path),
			chromedp.Poll[chromedp.Void](fmt.Sprintf(`document.querySelectorAll('#preview-values tr.preview-value')[%d]?.cells[0].textContent === %q`, i+1, path)),
			htmxSettled,
		)
	}
	require.Equal(t, "This change would have blocked 0 of the last 1 message.", eval[string](t, b, `document.querySelector('#impact-summary').textContent`))
	require.Equal(t, []string{"*.IDOC.E1EDK01.BELNRR: no value in the one message replayed"},
		eval[[]string](t, b, `Array.from(document.querySelectorAll('#unmatched-paths li'), li => li.textContent)`))
	require.Equal(t, "A proposed path matches 0 % of the sample messages", eval[string](t, b, `document.querySelector('#unmatched-paths header').textContent`))
	// The warning is a box of its own, above the impact tables, not a line of small print.
	require.True(t, eval[bool](t, b, `(() => {
		const w = document.querySelector('#unmatched-paths'), table = document.querySelector('#impact-table');
		return w.getBoundingClientRect().height > 80 && w.compareDocumentPosition(table) === Node.DOCUMENT_POSITION_FOLLOWING;
	})()`))
	require.Equal(t, "*.IDOC.E1EDK01.BELNRR", eval[string](t, b, `document.querySelector('#impact-paths tr.unmatched code').textContent`))
	require.Equal(t, "This path found no value in the one message replayed: see the impact below.",
		eval[string](t, b, `document.querySelector('#path-4-unmatched').textContent.replace(/\s+/g, ' ').trim()`),
		"the warning stands by the path's input too")
	require.Equal(t, []string{"path-4-unmatched"},
		eval[[]string](t, b, `Array.from(document.querySelectorAll('.path-warning:not([hidden])'), w => w.id)`),
		"only the unmatched path is marked")

	height := eval[int](t, b, `document.documentElement.scrollHeight`)
	require.Greater(t, height, 2*viewportHeight, "the page is long enough to need the sticky bar")
	saveInWindow := `(() => { const r = document.querySelector('#save-type').getBoundingClientRect(); return r.top >= 0 && r.bottom <= innerHeight; })()`
	for _, y := range []string{"0", "document.documentElement.scrollHeight / 2", "document.documentElement.scrollHeight"} {
		b.do(t, chromedp.Evaluate[chromedp.Void](`window.scrollTo(0, `+y+`)`))
		require.True(t, eval[bool](t, b, saveInWindow), "Save is in the window scrolled to %s of %d px", y, height)
	}
	b.requireFitsWidth(t)
	b.screenshot(t, "admin_type_editor_unmatched")

	// Fixing the path while typing takes the warning away from beside the
	// input as from the report; a new typo brings it back.
	for _, edit := range []struct {
		keys, path string
		unmatched  bool
	}{
		{strings.Repeat(kb.Backspace, len("BELNRR")) + "ZTERM", "*.IDOC.E1EDK01.ZTERM", false},
		{"X", "*.IDOC.E1EDK01.ZTERMX", true},
	} {
		b.do(t,
			chromedp.SendKeys(chromedp.CSS(`#path-4`), edit.keys),
			chromedp.Poll[chromedp.Void](fmt.Sprintf(`document.querySelectorAll('#preview-values tr.preview-value')[4]?.cells[0].textContent === %q`, edit.path)),
			htmxSettled,
		)
		require.Equal(t, edit.unmatched, eval[bool](t, b, `document.querySelector('#unmatched-paths') !== null`), edit.path)
		require.Equal(t, !edit.unmatched, eval[bool](t, b, `document.querySelector('#path-4-unmatched').hidden`), edit.path)
	}
	require.Equal(t, "This path found no value in the one message replayed: see the impact below.",
		eval[string](t, b, `document.querySelector('#path-4-unmatched').textContent.replace(/\s+/g, ' ').trim()`))

	// Save is pressed where it is, without scrolling, and saves.
	b.do(t,
		chromedp.Evaluate[chromedp.Void](`window.scrollTo(0, 0)`),
		chromedp.Click(chromedp.CSS(`#save-type`)),
		chromedp.WaitVisible(chromedp.CSS(`#type-saved`)),
	)
	require.Equal(t, site.url+pagePath(id)+"?saved=2", b.location(t))
	require.Zero(t, b.dialogs.Load())
}

// The editor lists the replayed messages whose fingerprint falls back to
// the docnum, with what each path read, and warns about a proposed path
// that reads one value in every message: MESTYP beside an order number
// that some orders lack would make all of those one order.
func TestBrowserTypeEditorConstantPathAndFallbacks(t *testing.T) {
	t.Parallel()
	site := newAdminSite(t)
	email := site.user(t, "admin@acme.example", auth.RoleAdmin, "")
	id := site.typeID(t, "acme", "ORDERS05")
	order := readFile(t, "orders05.json")
	without := bytes.Replace(order, []byte(`"BELNR": "4500012345",`), nil, 1)
	var fellBack []string
	for i, doc := range [][]byte{
		bytes.Replace(order, []byte(`"BELNR": "4500012345",`), []byte(`"BELNR": "4500012346",`), 1),
		bytes.Replace(order, []byte(`"BELNR": "4500012345",`), []byte(`"BELNR": "4500012347",`), 1),
		without, without,
	} {
		r := site.post(t, fmt.Appendf(nil, `{"message_type":"ORDERS05","docnum":"00000000009002%02d","payload":%s}`, i, doc))
		require.Equal(t, http.StatusCreated, r.status, "%s", r.body)
		if i >= 2 {
			fellBack = append(fellBack, fmt.Sprintf("#%.0f | 00000000009002%02d | *.IDOC.E1EDK01.BELNR matched nothing", r.json(t)["id"], i))
		}
	}
	const fallbackRows = `Array.from(document.querySelectorAll('#fallback-messages tr.fallback-message'), r => Array.from(r.cells, c => c.textContent.trim()).join(' | '))`

	b := newBrowser(t)
	b.signIn(t, site.url, pagePath(id), email)
	b.do(t, chromedp.WaitVisible(chromedp.CSS(`#impact-summary`)))
	require.Equal(t, fellBack, eval[[]string](t, b, fallbackRows), "the orders without a number, oldest first")
	require.Equal(t, site.url+"/admin/messages/"+strings.Fields(strings.TrimPrefix(fellBack[0], "#"))[0],
		eval[string](t, b, `document.querySelector('#fallback-messages tr.fallback-message a').href`))
	require.False(t, eval[bool](t, b, `document.querySelector('#constant-paths') !== null`))
	b.screenshot(t, "admin_type_editor_fallbacks")

	b.do(t,
		chromedp.Click(chromedp.CSS(`#add-path`)),
		chromedp.Poll[chromedp.Void](`document.activeElement.id === 'path-1'`),
		chromedp.SendKeys(chromedp.CSS(`#path-1`), "*.IDOC.EDI_DC40.MESTYP"),
		chromedp.Poll[chromedp.Void](`document.querySelectorAll('#preview-values tr.preview-value')[1]?.cells[0].textContent === '*.IDOC.EDI_DC40.MESTYP'`),
		htmxSettled,
	)
	require.Equal(t, "This change would have blocked 1 of the last 5 messages.", eval[string](t, b, `document.querySelector('#impact-summary').textContent`),
		"the second order without a number becomes a duplicate of the first")
	require.Equal(t, "A proposed path reads one value in every sample message", eval[string](t, b, `document.querySelector('#constant-paths header').textContent`))
	require.Equal(t, []string{`*.IDOC.EDI_DC40.MESTYP: one value, "ORDERS", in all 5 messages where it read one`},
		eval[[]string](t, b, `Array.from(document.querySelectorAll('#constant-paths li'), li => li.textContent)`))
	require.Equal(t, `This path found one value, "ORDERS", in all 5 messages where it read one: see the impact below.`,
		eval[string](t, b, `document.querySelector('#path-1-unmatched').textContent.replace(/\s+/g, ' ').trim()`),
		"the warning stands by the path's input too")
	require.Equal(t, []string{"path-1-unmatched"},
		eval[[]string](t, b, `Array.from(document.querySelectorAll('.path-warning:not([hidden])'), w => w.id)`))
	require.Empty(t, eval[[]string](t, b, fallbackRows), "with MESTYP present, nothing falls back any more")
	b.requireFitsWidth(t)
	b.screenshot(t, "admin_type_editor_constant")
	require.Zero(t, b.dialogs.Load())
}
