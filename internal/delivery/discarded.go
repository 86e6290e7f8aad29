package delivery

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
)

// discardedCheck is how often a worker process looks for deliveries whose
// job River discarded: often enough that such a delivery shows as failed,
// and raises its alert, within a minute; rarely enough to cost nothing.
const discardedCheck = 30 * time.Second

// failDiscarded marks failed the pending deliveries whose River job River
// discarded, finalized after $1 (NULL: any time River still keeps), and
// that have no other job that will run (an admin's retry queues a new one),
// and returns them. River discards a job on its last attempt when the
// attempt ended before it could record its outcome (the database was
// unavailable at that moment) or when its worker process died and River
// rescued the job: the delivery used up its attempts, and would otherwise
// stay pending with nothing left to make it. River's index on state and
// finalized_at reads only the jobs discarded since, and its index on args
// finds a delivery's other jobs. River's tables are not in edihub's
// migrations, where sqlc reads the schema, so the statement is here.
const failDiscarded = `
UPDATE deliveries d SET status = 'failed'
FROM river_job j
WHERE j.state = 'discarded' AND j.finalized_at IS NOT NULL
  AND ($1::timestamptz IS NULL OR j.finalized_at > $1::timestamptz)
  AND j.kind = 'delivery' AND d.id = (j.args->>'delivery_id')::bigint AND d.status = 'pending'
  AND NOT EXISTS (SELECT FROM river_job live
                  WHERE live.args @> jsonb_build_object('delivery_id', d.id) AND live.kind = 'delivery'
                    AND live.state NOT IN ('completed', 'cancelled', 'discarded'))
RETURNING d.id, d.destination_id`

// discardedWatch remembers, for one worker process, up to when it has
// looked for discarded jobs.
type discardedWatch struct {
	checkedAt time.Time  // when it last looked
	since     *time.Time // the finalized_at past which to look next; nil: all
}

// checkDiscarded fails the deliveries of jobs discarded since the last check, at
// most every discardedCheck. A process looks at every discarded job River
// keeps when it starts, and after that a minute back from its last look,
// so that a job finalized by a transaction that committed late is seen.
func (r *Runner) checkDiscarded(ctx context.Context, now time.Time) error {
	if !r.discarded.checkedAt.IsZero() && now.Sub(r.discarded.checkedAt) < discardedCheck {
		return nil
	}
	rows, err := r.pool.Query(ctx, failDiscarded, r.discarded.since)
	if err != nil {
		return fmt.Errorf("fail deliveries of discarded jobs: %w", err)
	}
	failed, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) ([2]int64, error) {
		var d [2]int64
		return d, row.Scan(&d[0], &d[1])
	})
	if err != nil {
		return fmt.Errorf("fail deliveries of discarded jobs: %w", err)
	}
	for _, d := range failed {
		r.log.Warn("delivery failed: its last attempt ended without a record", "delivery_id", d[0], "destination_id", d[1])
	}
	since := now.Add(-time.Minute)
	r.discarded = discardedWatch{checkedAt: now, since: &since}
	return nil
}
