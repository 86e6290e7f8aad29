package server_test

import (
	"bytes"
	"fmt"
	"net/http"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/require"

	"github.com/lefia/edihub/internal/auth"
)

// changedWithE1EDK02AsArray is the sample's changed repeat output with its
// E1EDK02 written as a one-item array: changed content and a shape change.
func changedWithE1EDK02AsArray(t *testing.T) []byte {
	t.Helper()
	raw := readFile(t, "orders05_changed_content_same_belnr.json")
	raw = bytes.Replace(raw, []byte(`"E1EDK02": {`), []byte(`"E1EDK02": [{`), 1)
	raw = bytes.Replace(raw, []byte("\"UZEIT\": \"101500\"\n   },"), []byte("\"UZEIT\": \"101500\"\n   }],"), 1)
	require.Contains(t, string(raw), `}],`)
	return raw
}

// A copy that differs only in the shape of a segment is shown as such in
// the audit log and kept for no one's review; a changed copy that is also
// reshaped shows the shape as one row of its diff and its changes inside
// the segment as usual.
func TestBrowserShapeOnlyCopyIsNotAChange(t *testing.T) {
	t.Parallel()
	site := newAdminSite(t)
	reshaped := site.post(t, envelopeFor(t, "ORDERS05", "orders05_e1edk02_as_array.json"))
	require.Equal(t, http.StatusOK, reshaped.status, "%s", reshaped.body)
	changed := site.post(t, envelopeOf(t, "ORDERS05", changedWithE1EDK02AsArray(t)))
	require.Equal(t, http.StatusOK, changed.status, "%s", changed.body)
	var copyID int64
	require.NoError(t, site.pool.QueryRow(t.Context(), `SELECT id FROM blocked_copies`).Scan(&copyID), "only the changed copy is kept")

	email := site.user(t, "admin@acme.example", auth.RoleAdmin, "acme")
	b := newBrowser(t)
	b.signIn(t, site.url, "/admin/audit?action=message.duplicate_blocked", email)
	require.Equal(t, []string{"changed diff", "shape only", "identical"},
		eval[[]string](t, b, `Array.from(document.querySelectorAll('tr.event'), r => r.cells[4].innerText.replace(/\s+/g, ' ').trim())`))
	require.Equal(t, "the same content; a segment is an object in one and a one-item array in the other",
		eval[string](t, b, `document.querySelector('tr.event .badge.shape').title`))
	b.requireFitsWidth(t)
	b.screenshot(t, "admin_audit_shape_only")

	b.do(t,
		chromedp.Click(chromedp.CSS(`a.diff`)),
		chromedp.WaitVisible(chromedp.CSS(`#diff`)),
	)
	require.Equal(t, fmt.Sprintf("%s/admin/blocked/%d", site.url, copyID), b.location(t))
	require.Equal(t, "changed", eval[string](t, b, `document.querySelector('#copy-content').textContent`))
	rows := eval[[][]string](t, b, `Array.from(document.querySelectorAll('tr.change'), r => Array.from(r.cells, c => c.textContent.trim()))`)
	require.Len(t, rows, 8)
	require.Contains(t, rows, []string{"shape", "/ORDERS05/IDOC/E1EDK02", "{…}", "[{…}]"})
	require.Contains(t, rows, []string{"changed", "/ORDERS05/IDOC/E1EDS01/SUMME", `"1432.80"`, `"2388.00"`})
	b.requireFitsWidth(t)
	b.screenshot(t, "admin_blocked_with_shape_change")
	require.Zero(t, b.dialogs.Load())
}
