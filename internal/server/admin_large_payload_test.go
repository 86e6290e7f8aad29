package server_test

import (
	"bytes"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/require"

	"github.com/lefia/edihub/internal/auth"
	"github.com/lefia/edihub/internal/messageview"
)

// largeOrder is an order payload of about size bytes, written with the
// spacing a sender might use, whose order number opens it and whose
// reference closes it, after its many items.
func largeOrder(size int) []byte {
	var p bytes.Buffer
	p.WriteString(`{ "IDOC": { "EDI_DC40": { "DOCNUM": "0000000000900555" }, "E1EDK01": { "BELNR": "4500055555" },` + "\n" + `  "E1EDP01": [`)
	for i := 0; p.Len() < size; i++ {
		if i > 0 {
			p.WriteString(", ")
		}
		fmt.Fprintf(&p, `{"POSEX": "%06d", "MATNR": "MAT-%08d", "MENGE": "1.000"}`, i*10, i)
	}
	p.WriteString(`],` + "\n" + `  "TAIL": { "REF": "R-77" } } }`)
	return p.Bytes()
}

// largeMessage stores a large order in the site's tenant, whose type
// reads the order number and the closing reference, and returns its id and
// payload.
func (site *adminSite) largeMessage(t *testing.T, size int) (int64, []byte) {
	t.Helper()
	site.messageType(t, "BIG_ORDER", []string{"IDOC.E1EDK01.BELNR", "IDOC.TAIL.REF"}, nil)
	payload := largeOrder(size)
	body := append([]byte(`{"message_type":"BIG_ORDER","payload":`), payload...)
	resp := site.post(t, append(body, '}'))
	require.Equal(t, http.StatusCreated, resp.status, "%s", resp.body)
	return int64(resp.json(t)["id"].(float64)), payload
}

// A message page shows the start of a large payload, with the key values
// in it marked, says what it left out, and offers the whole payload for
// download exactly as received, a part at a time. A 4 MB payload made a
// page of about 10 MB before; now the page stays near
// messageview.MaxShownBytes, escaped.
func TestMessagePageShowsTheStartOfALargePayload(t *testing.T) {
	t.Parallel()
	site := newAdminSite(t)
	id, payload := site.largeMessage(t, 4<<20)
	c := site.client(t)
	c.login(site.user(t, "viewer@acme.example", auth.RoleViewer, "acme"))

	page := c.get(fmt.Sprintf("/admin/messages/%d", id))
	require.Equal(t, http.StatusOK, page.status)
	require.Less(t, len(page.body), 6*messageview.MaxShownBytes, "the page holds the start of the payload, not all of it")
	for _, want := range []string{
		`<mark title="IDOC.E1EDK01.BELNR">&#34;4500055555&#34;</mark>`,
		`id="payload-cut"`,
		"This payload is 4.0 MiB as stored: only the first 256 KiB of its text are shown",
		"One key value further on is not marked; it is listed under Business key.",
		"R-77", // the key value past the cut, in the table of key values
	} {
		require.True(t, strings.Contains(string(page.body), want), "the page shows %s", want)
	}

	download := c.get(fmt.Sprintf("/admin/messages/%d/received", id))
	require.Equal(t, http.StatusOK, download.status)
	require.Equal(t, "application/json", download.header.Get("Content-Type"))
	require.Equal(t, strconv.Itoa(len(payload)), download.header.Get("Content-Length"))
	require.Equal(t, fmt.Sprintf(`attachment; filename="message-%d.json"`, id), download.header.Get("Content-Disposition"))
	require.True(t, bytes.Equal(payload, download.body), "the payload byte for byte, spacing and all")

	// Another tenant's user finds neither the page nor the download.
	other := site.client(t)
	other.login(site.user(t, "viewer@globex.example", auth.RoleViewer, "globex"))
	require.Equal(t, http.StatusNotFound, other.get(fmt.Sprintf("/admin/messages/%d/received", id)).status)
}

// In a browser the page of a large payload shows its start, marked, with
// the note and the download link above it, and fits the window.
func TestBrowserMessagePageOfALargePayload(t *testing.T) {
	t.Parallel()
	site := newAdminSite(t)
	id, _ := site.largeMessage(t, 4<<20)
	email := site.user(t, "admin@acme.example", auth.RoleAdmin, "")
	b := newBrowser(t)
	b.signIn(t, site.url, fmt.Sprintf("/admin/messages/%d", id), email)

	b.do(t, chromedp.WaitVisible(chromedp.CSS(`#payload-cut`)))
	require.Equal(t, []string{`"4500055555"`}, eval[[]string](t, b, `Array.from(document.querySelectorAll('#payload mark'), m => m.textContent)`))
	shown := eval[int](t, b, `new TextEncoder().encode(document.querySelector('#payload').textContent).length`)
	require.LessOrEqual(t, shown, messageview.MaxShownBytes)
	require.Greater(t, shown, messageview.MaxShownBytes/2)
	require.Equal(t, fmt.Sprintf("/admin/messages/%d/received", id),
		eval[string](t, b, `document.querySelector('#payload-cut a#payload-download').getAttribute('href')`))
	b.requireFitsWidth(t)
	b.screenshot(t, "message-large-payload")
	require.Zero(t, b.dialogs.Load())
}

// A large changed copy's page shows its diff and the start of its payload,
// and its download is the copy's payload exactly as received.
func TestBlockedCopyPageShowsTheStartOfALargePayload(t *testing.T) {
	t.Parallel()
	site := newAdminSite(t)
	_, payload := site.largeMessage(t, 4<<20)
	copyPayload := bytes.Replace(payload, []byte(`"MAT-00000007"`), []byte(`"MAT-99999999"`), 1)
	body := append([]byte(`{"message_type":"BIG_ORDER","payload":`), copyPayload...)
	resp := site.post(t, append(body, '}'))
	require.Equal(t, http.StatusOK, resp.status, "%s", resp.body)
	var copyID int64
	require.NoError(t, site.pool.QueryRow(t.Context(), `SELECT id FROM blocked_copies WHERE octet_length(payload::text) > 1000000`).Scan(&copyID))
	c := site.client(t)
	c.login(site.user(t, "viewer@acme.example", auth.RoleViewer, "acme"))

	page := c.get(fmt.Sprintf("/admin/blocked/%d", copyID))
	require.Equal(t, http.StatusOK, page.status)
	require.Less(t, len(page.body), 6*messageview.MaxShownBytes, "the page holds the start of the payload, not all of it")
	for _, want := range []string{
		`<td class="path"><code>/IDOC/E1EDP01/7/MATNR</code></td>`,
		`id="copy-payload-cut"`,
		"This payload is 4.0 MiB as stored",
	} {
		require.True(t, strings.Contains(string(page.body), want), "the page shows %s", want)
	}
	download := c.get(fmt.Sprintf("/admin/blocked/%d/received", copyID))
	require.Equal(t, http.StatusOK, download.status)
	require.True(t, bytes.Equal(copyPayload, download.body), "the copy's payload byte for byte")
}
