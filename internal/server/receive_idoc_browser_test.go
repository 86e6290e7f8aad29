package server_test

import (
	"fmt"
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
	b.do(t, chromedp.WaitVisible(chromedp.CSS(`#received`)))
	require.Contains(t, eval[string](t, b, `document.querySelector('#received').textContent`), "<BELNR>4500012345</BELNR>")
	require.Contains(t, eval[string](t, b, `document.querySelector('#received-as').textContent`), "IDoc 1 of 2")
	require.Equal(t, []string{`"4500012345"`}, eval[[]string](t, b, `Array.from(document.querySelectorAll('#payload mark'), m => m.textContent)`))
	require.Equal(t, int32(0), b.dialogs.Load())
}
