package server_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/require"

	"github.com/lefia/edihub/internal/auth"
)

// An admin opens a message that arrived as one IDoc of a packet and reads
// the XML as received beside the JSON view its key paths read.
func TestBrowserMessagePageShowsIDocXML(t *testing.T) {
	t.Parallel()
	site := setup(t)
	site.messageType(t, "ORDERS05", []string{"*.IDOC.E1EDK01.BELNR"}, nil)
	idoc := idocOf(t, readFile(t, "orders05.xml"))
	results := packetResults(t, site.postXML(t, packetOf(t, idoc, withDocnum(idoc, "0000000000900177")), "application/x-sap.idoc", ""))
	email := site.user(t, "viewer@acme.example", auth.RoleViewer, "acme")
	b := newBrowser(t)

	b.signIn(t, site.url, fmt.Sprintf("/admin/messages/%d", int64(results[0]["id"].(float64))), email)
	// The XML is folded beside the JSON view; opened, it shows one element a line.
	b.do(t, chromedp.WaitVisible(chromedp.CSS(`#received-details summary`)))
	require.False(t, eval[bool](t, b, `document.querySelector('#received-details').open`))
	require.True(t, eval[bool](t, b, `(() => {
		const xml = document.querySelector('section.received').getBoundingClientRect();
		const json = document.querySelector('#payload').closest('section').getBoundingClientRect();
		return xml.top === json.top && xml.right <= json.left;
	})()`), "the JSON view is beside the XML")
	b.screenshot(t, "message-idoc-xml-folded")
	b.do(t, chromedp.Click(chromedp.CSS(`#received-details summary`)), chromedp.WaitVisible(chromedp.CSS(`#received`)))
	require.Contains(t, eval[string](t, b, `document.querySelector('#received').textContent`), "\n      <BELNR>4500012345</BELNR>\n")
	b.requireFitsWidth(t)
	require.Contains(t, eval[string](t, b, `document.querySelector('#received-as').textContent`), "IDoc 1 of 2")
	require.Equal(t, []string{`"4500012345"`}, eval[[]string](t, b, `Array.from(document.querySelectorAll('#payload mark'), m => m.textContent)`))
	b.screenshot(t, "message-idoc-xml")
	require.Equal(t, int32(0), b.dialogs.Load())
}

// An admin opens a blocked copy of an IDoc that arrived as XML and reads
// the XML as received beside the JSON view the diff compares.
func TestBrowserBlockedCopyShowsIDocXML(t *testing.T) {
	t.Parallel()
	site := setup(t)
	site.messageType(t, "ORDERS05", []string{"*.IDOC.E1EDK01.BELNR"}, nil)
	idoc := idocOf(t, readFile(t, "orders05.xml"))
	changed := strings.Replace(withDocnum(idoc, "0000000000900179"), "Purchasing Group 210", "Einkauf Süd", 1)
	packetResults(t, site.postXML(t, packetOf(t, idoc, changed), "application/x-sap.idoc", ""))
	var copyID int64
	require.NoError(t, site.pool.QueryRow(t.Context(), `SELECT id FROM blocked_copies`).Scan(&copyID))
	email := site.user(t, "admin@acme.example", auth.RoleAdmin, "acme")
	b := newBrowser(t)

	b.signIn(t, site.url, fmt.Sprintf("/admin/blocked/%d", copyID), email)
	b.do(t, chromedp.Click(chromedp.CSS(`#received-details summary`)), chromedp.WaitVisible(chromedp.CSS(`#received`)))
	require.Contains(t, eval[string](t, b, `document.querySelector('#received').textContent`), "<BNAME>Einkauf Süd</BNAME>")
	require.Contains(t, eval[string](t, b, `document.querySelector('#received-as').textContent`), "IDoc 2 of 2")
	require.Contains(t, eval[string](t, b, `document.querySelector('#copy-payload').textContent`), `"BNAME": "Einkauf Süd"`)
	require.Equal(t, fmt.Sprintf("/admin/blocked/%d/received", copyID),
		eval[string](t, b, `document.querySelector('#received-download').getAttribute('href')`))
	b.screenshot(t, "blocked-copy-idoc-xml")
	require.Equal(t, int32(0), b.dialogs.Load())
}
