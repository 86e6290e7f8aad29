package server_test

import (
	"fmt"
	"net/http"
	"regexp"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/lefia/edihub/internal/auth"
	"github.com/lefia/edihub/internal/pgtest"
	"github.com/lefia/edihub/internal/testfactory"
)

var messageLinkPattern = regexp.MustCompile(`<a class="message-link" href="/admin/messages/(\d+)"`)

// listedMessages are the ids of the messages a messages page lists.
func listedMessages(body []byte) []string {
	var ids []string
	for _, m := range messageLinkPattern.FindAllSubmatch(body, -1) {
		ids = append(ids, string(m[1]))
	}
	return ids
}

// A message that came in an interchange shows the interchange's standard,
// sender and receiver and its three control numbers; the messages page
// finds the messages of an interchange by its control number, within the
// user's tenant.
func TestMessagesOfAnInterchange(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.messageType(t, "850", []string{"BEG.0.BEG03"}, nil)
	b.messageType(t, "ORDERS", []string{"BGM.0.BGM02"}, nil)
	decodeInterchange(t, b.postInterchange(t, readFile(t, "x12_850.edi"), "application/edi-x12"))
	decodeInterchange(t, b.postInterchange(t, readFile(t, "edifact_orders.edi"), "application/edifact"))
	// The same purchase orders under a new control number are blocked by
	// their business keys: that interchange stored no message of its own.
	decodeInterchange(t, b.postInterchange(t, x12Numbered(t, 906), "application/edi-x12"))
	x12 := pgtest.Column[int64](t, b.pool, `SELECT id FROM messages WHERE content_type = 'application/edi-x12' ORDER BY id`)
	require.Len(t, x12, 2)
	edifact := pgtest.Column[int64](t, b.pool, `SELECT id FROM messages WHERE content_type = 'application/edifact' ORDER BY id`)
	require.NotEmpty(t, edifact)

	c := b.client(t)
	c.login(b.user(t, "viewer@acme.example", auth.RoleViewer, "acme"))
	page := string(c.get(fmt.Sprintf("/admin/messages/%d", x12[1])).body)
	require.Contains(t, page, `X12 004010 from <code>ZZ:ACMEBUYER</code> to <code>ZZ:EDIHUBSELLER</code>`)
	require.Contains(t, page, `<a id="interchange-control-number" href="/admin/messages?control_number=000000905&amp;environment=production&amp;tenant=acme">000000905</a>`)
	require.Contains(t, page, `<td id="group-control-number">905</td>`)
	require.Contains(t, page, `Transaction set control number</th><td id="message-control-number">0002</td>`)
	require.Contains(t, page, `Message 2 of 2 in one interchange`)
	page = string(c.get(fmt.Sprintf("/admin/messages/%d", edifact[0])).body)
	require.Contains(t, page, `from <code>14:5412345000013</code> to <code>14:4012345000009</code>`)
	require.Contains(t, page, `>IC0042</a>`)
	require.Contains(t, page, `Message reference number</th><td id="message-control-number">M1</td>`)

	require.Equal(t, []string{fmt.Sprint(x12[1]), fmt.Sprint(x12[0])}, listedMessages(c.get("/admin/messages?control_number=000000905").body))
	require.Equal(t, []string{fmt.Sprint(x12[0])}, listedMessages(c.get("/admin/messages?control_number=000000905&docnum=0001").body))
	require.Len(t, listedMessages(c.get("/admin/messages?control_number=IC0042").body), len(edifact))
	require.Empty(t, listedMessages(c.get("/admin/messages?control_number=000000906").body), "its messages were blocked, not stored")
	require.Contains(t, string(c.get("/admin/messages?control_number=1&key=PO-4711").body), "not both")

	global := b.client(t)
	global.login(b.user(t, "ops@example.com", auth.RoleAdmin, ""))
	require.Len(t, listedMessages(global.get("/admin/messages?control_number=000000905").body), 2)
	testfactory.TenantWithEnvironment(t, b.pool, "globex")
	require.Empty(t, listedMessages(global.get("/admin/messages?control_number=000000905&tenant=globex").body))
	globex := b.client(t)
	globex.login(b.user(t, "viewer@globex.example", auth.RoleViewer, "globex"))
	resp := globex.get("/admin/messages?control_number=000000905")
	require.Equal(t, http.StatusOK, resp.status)
	require.Empty(t, listedMessages(resp.body), "another tenant's interchange")
}
