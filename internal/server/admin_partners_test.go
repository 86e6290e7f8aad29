package server_test

import (
	"context"
	"fmt"
	"net/http"
	"regexp"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/lefia/edihub/internal/auth"
	"github.com/lefia/edihub/internal/db"
	"github.com/lefia/edihub/internal/partner"
	"github.com/lefia/edihub/internal/pgtest"
	"github.com/lefia/edihub/internal/testfactory"
)

// x12Numbered is the X12 850 sample under control number n.
func x12Numbered(t *testing.T, n int) []byte {
	t.Helper()
	return withControlNumber(readFile(t, "x12_850.edi"), fmt.Sprintf("%09d", n))
}

// Many simultaneous interchanges of one sender and receiver: each
// number skipped is a gap, no number received is one, one partner row.
func TestSimultaneousInterchangesKeepEveryGap(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.messageType(t, "850", nil, nil)
	decodeInterchange(t, b.postInterchange(t, x12Numbered(t, 1), "application/edi-x12"))
	skipped := map[int]bool{7: true, 20: true, 21: true, 39: true}
	var numbers []int
	for n := 2; n <= 40; n++ {
		if !skipped[n] {
			numbers = append(numbers, n)
		}
	}
	next := make(chan int, len(numbers))
	for _, n := range numbers {
		next <- n
	}
	for _, r := range sendConcurrently(len(numbers), func() response {
		return b.postInterchange(t, x12Numbered(t, <-next), "application/edi-x12")
	}) {
		require.Equal(t, "accepted", decodeInterchange(t, r).Interchange["status"])
	}
	require.Equal(t, []int64{7, 20, 21, 39}, pgtest.Column[int64](t, b.pool, `SELECT control_number FROM interchange_gaps ORDER BY 1`))
	require.Equal(t, 1, b.count(t, `SELECT count(*) FROM interchange_partners`))
	require.Equal(t, 1+len(numbers), b.count(t, `SELECT count(*) FROM interchanges`))
	require.Equal(t, 1, b.count(t, `SELECT count(*) FROM interchange_partners WHERE highest = 40 AND last_seen <= now()`))

	// A repeat records nothing; a skipped number arriving closes its gap.
	decodeInterchange(t, b.postInterchange(t, x12Numbered(t, 30), "application/edi-x12"))
	decodeInterchange(t, b.postInterchange(t, x12Numbered(t, 20), "application/edi-x12"))
	require.Equal(t, []int64{7, 21, 39}, pgtest.Column[int64](t, b.pool, `SELECT control_number FROM interchange_gaps ORDER BY 1`))
}

// partnerSite is acme with a partner that skipped 903 and 904 two hours
// ago and 906 a minute ago, an EDIFACT partner with no gaps, and globex
// with one of its own.
type partnerSite struct {
	*testBundle
	skipping, edifact, globex int64
}

func newPartnerSite(t *testing.T) *partnerSite {
	t.Helper()
	site := &partnerSite{testBundle: setup(t)}
	site.messageType(t, "850", nil, nil)
	site.messageType(t, "ORDERS", nil, nil)
	for _, n := range []int{901, 902, 905} {
		decodeInterchange(t, site.postInterchange(t, x12Numbered(t, n), "application/edi-x12"))
	}
	site.exec(t, `UPDATE interchange_gaps SET missing_since = now() - interval '2 hours'`)
	decodeInterchange(t, site.postInterchange(t, x12Numbered(t, 907), "application/edi-x12"))
	decodeInterchange(t, site.postInterchange(t, readFile(t, "edifact_orders.edi"), "application/edifact"))
	globex, env := testfactory.TenantWithEnvironment(t, site.pool, "globex")
	require.NoError(t, db.WithTx(context.Background(), site.pool, func(q *db.Queries) error {
		return partner.Record(context.Background(), q, partner.Pair{TenantID: globex.ID, EnvironmentID: env.ID,
			Standard: "x12", Sender: "ZZ:GLOBEXBUYER", Receiver: "ZZ:EDIHUBSELLER"}, "000000001")
	}))
	ids := pgtest.Column[int64](t, site.pool, `SELECT id FROM interchange_partners ORDER BY id`)
	require.Len(t, ids, 3)
	site.skipping, site.edifact, site.globex = ids[0], ids[1], ids[2]
	return site
}

func (s *partnerSite) exec(t *testing.T, sql string, args ...any) {
	t.Helper()
	_, err := s.pool.Exec(context.Background(), sql, args...)
	require.NoError(t, err)
}

var partnerRow = regexp.MustCompile(`<tr class="partner" data-id="(\d+)" data-gaps="(\d+)"`)

// partnerRows are the partners a page lists, as id:gaps.
func partnerRows(body []byte) []string {
	var rows []string
	for _, m := range partnerRow.FindAllSubmatch(body, -1) {
		rows = append(rows, string(m[1])+":"+string(m[2]))
	}
	return rows
}

// The partners page lists each pair seen last first, with the numbers
// missing longer than INTERCHANGE_GAP_AFTER; a tenant's users see their
// tenant's partners only.
func TestPartnersPageIsScopedAndFiltered(t *testing.T) {
	t.Parallel()
	site := newPartnerSite(t)
	acme := site.client(t)
	acme.login(site.user(t, "viewer@acme.example", auth.RoleViewer, "acme"))
	resp := acme.get("/admin/partners")
	require.Equal(t, http.StatusOK, resp.status)
	require.Equal(t, []string{fmt.Sprintf("%d:0", site.edifact), fmt.Sprintf("%d:2", site.skipping)}, partnerRows(resp.body),
		"906 has been missing for a minute only")
	require.Contains(t, string(resp.body), "903–904")
	require.Contains(t, string(resp.body), `<code class="last-control-number">000000907</code>`)
	require.Equal(t, []string{fmt.Sprintf("%d:2", site.skipping)}, partnerRows(acme.get("/admin/partners?gaps=open").body))
	require.Equal(t, []string{fmt.Sprintf("%d:0", site.edifact)}, partnerRows(acme.get("/admin/partners?standard=edifact").body))
	require.Contains(t, string(acme.get("/admin/partners?tenant=globex").body), `there is no tenant &#34;globex&#34;`)
	require.Contains(t, string(acme.get("/admin/partners?standard=x13").body), `&#34;x13&#34; is not a standard`)

	global := site.client(t)
	global.login(site.user(t, "ops@example.com", auth.RoleAdmin, ""))
	require.Equal(t, []string{fmt.Sprintf("%d:0", site.globex), fmt.Sprintf("%d:0", site.edifact), fmt.Sprintf("%d:2", site.skipping)},
		partnerRows(global.get("/admin/partners").body))
	require.Equal(t, []string{fmt.Sprintf("%d:0", site.globex)}, partnerRows(global.get("/admin/partners?tenant=globex").body))
	require.Equal(t, []string{fmt.Sprintf("%d:2", site.skipping)},
		partnerRows(global.get("/admin/partners?tenant=acme&environment=production&standard=x12").body))
}
