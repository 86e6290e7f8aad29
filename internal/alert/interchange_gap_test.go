package alert_test

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/lefia/edihub/internal/alert"
	"github.com/lefia/edihub/internal/db"
	"github.com/lefia/edihub/internal/partner"
	"github.com/lefia/edihub/internal/pgtest"
)

// A control number skipped opens interchange.gap once it has been missing
// for INTERCHANGE_GAP_AFTER, and the alert resolves when it arrives.
func TestInterchangeGapOpensAfterItsTimeAndResolvesWhenTheNumberArrives(t *testing.T) {
	t.Parallel()
	b := setup(t)
	pair := partner.Pair{TenantID: b.tenant.ID, EnvironmentID: b.env.ID, Standard: "x12", Sender: "ZZ:ACMEBUYER", Receiver: "ZZ:EDIHUBSELLER"}
	record := func(n string) {
		require.NoError(t, db.WithTx(context.Background(), b.pool, func(q *db.Queries) error {
			return partner.Record(context.Background(), q, pair, n)
		}))
	}
	record("000000001")
	record("000000004")
	require.Zero(t, b.evaluate(t).Opened, "interchanges sent at once may arrive out of order")

	b.clock.advance(time.Hour + time.Minute)
	require.Equal(t, 1, b.evaluate(t).Opened)
	id := pgtest.Column[int64](t, b.pool, `SELECT id FROM interchange_partners`)[0]
	a := b.requireOneAlert(t, alert.InterchangeGap, "partner:"+strconv.FormatInt(id, 10), alert.Open)
	require.Equal(t, b.tenant.ID, *a.TenantID)
	require.Equal(t, "Interchanges of acme/production are missing: X12 from ZZ:ACMEBUYER to ZZ:EDIHUBSELLER", a.Title)
	require.Contains(t, a.Lines[2], "2 control numbers skipped and missing since ")
	require.True(t, strings.HasSuffix(a.Lines[2], ": 2–3"), a.Lines[2])

	record("000000002")
	require.Zero(t, b.evaluate(t).Resolved, "3 is still missing")
	record("000000003")
	require.Equal(t, 1, b.evaluate(t).Resolved)
	b.requireOneAlert(t, alert.InterchangeGap, "partner:"+strconv.FormatInt(id, 10), alert.Resolved)
	require.Equal(t, []string{"interchange.gap opened", "interchange.gap resolved"}, b.notified(t))
}
