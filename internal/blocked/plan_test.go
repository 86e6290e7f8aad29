package blocked_test

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/lefia/edihub/internal/auth"
	"github.com/lefia/edihub/internal/blocked"
	"github.com/lefia/edihub/internal/delivery"
	"github.com/lefia/edihub/internal/pgtest"
)

// fillCopies clones the bundle's copy 20,000 times over six weeks, nine in
// ten of them dismissed, each with an event of its own (received when its
// event was created, as the key between them requires), so that the review
// queue is a small part of the table as it is after months of traffic.
const fillCopies = `
WITH ev AS (
    INSERT INTO audit_events (tenant_id, environment_id, message_type_id, message_id, action, actor, match_key, details,
                              created_at)
    SELECT e.tenant_id, e.environment_id, e.message_type_id, e.message_id, e.action, e.actor, e.match_key, e.details,
           now() - (g % 1000) * interval '1 hour'
    FROM audit_events e, generate_series(1, 20000) g
    WHERE e.id = (SELECT audit_event_id FROM blocked_copies)
    RETURNING id, created_at
)
INSERT INTO blocked_copies (tenant_id, environment_id, message_type_id, audit_event_id, original_message_id,
                            docnum, payload, content_hash, sender, received_at, dismissed_at, dismissed_by, dismiss_reason)
SELECT c.tenant_id, c.environment_id, c.message_type_id, ev.id, c.original_message_id,
       c.docnum, c.payload, sha256(int8send(ev.id)), c.sender, ev.created_at,
       CASE WHEN ev.id % 10 <> 0 THEN now() END, CASE WHEN ev.id % 10 <> 0 THEN 1 END,
       CASE WHEN ev.id % 10 <> 0 THEN 'reviewed' END
FROM ev, (SELECT * FROM blocked_copies) c;
`

// The navigation's count and the review queue read a range of a review
// index, never the whole table, for a tenant's admin and a global one.
func TestReviewReadsAReviewIndex(t *testing.T) {
	t.Parallel()
	b := setup(t)
	_, err := b.pool.Exec(context.Background(), fillCopies)
	require.NoError(t, err)
	// As autovacuum would: statistics, and the visibility map that lets a
	// count read the index alone.
	_, err = b.pool.Exec(context.Background(), `VACUUM ANALYZE blocked_copies`)
	require.NoError(t, err)
	url := b.pool.Config().ConnString()

	for _, scope := range []auth.Scope{b.admin.Scope(), auth.GlobalScope()} {
		for _, query := range []string{"-- name: BlockedCopyOpenCount", "-- name: BlockedCopyReviewList"} {
			pool, rec := pgtest.TracedPool(t, url, query)
			svc := blocked.New(pool, delivery.NewService(pool, 3))
			if strings.Contains(query, "Count") {
				n, err := svc.OpenCount(context.Background(), scope)
				require.NoError(t, err)
				require.Equal(t, int64(blocked.MaxOpenCount), n, "bounded")
			} else {
				pg, err := svc.Review(context.Background(), scope, blocked.Filter{})
				require.NoError(t, err)
				require.Len(t, pg.Copies, blocked.ReviewPageSize)
				require.NotEmpty(t, pg.Older)
			}
			scans, raw := rec.Explain(t, pool)
			require.NotContains(t, scans, "Seq Scan on blocked_copies", "%s", raw)
			require.True(t, slices.ContainsFunc(scans, func(s string) bool { return strings.Contains(s, "_review") }),
				"%s reads a review index: %s", query, raw)
		}
	}
}
