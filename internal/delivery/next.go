package delivery

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/lefia/edihub/internal/apperr"
	"github.com/lefia/edihub/internal/auditevent"
	"github.com/lefia/edihub/internal/auth"
	"github.com/lefia/edihub/internal/db"
)

// liveJobs finds the job that will make each of some deliveries' next
// attempt: the newest of its jobs River has not finished, along River's
// index on args, with its state and when it is due. River's tables are not
// in edihub's migrations, where sqlc reads the schema, so the statement is
// here.
const liveJobs = `
SELECT ids.id, j.id, j.state, j.scheduled_at
FROM unnest($1::bigint[]) AS ids (id)
CROSS JOIN LATERAL (
    SELECT j.id, j.state::text, j.scheduled_at FROM river_job j
    WHERE j.args @> jsonb_build_object('delivery_id', ids.id) AND j.kind = 'delivery'
      AND j.state IN ('available', 'pending', 'retryable', 'running', 'scheduled')
    ORDER BY j.id DESC LIMIT 1
) j`

// NextAttempt is when a pending delivery's next attempt is due, as its job
// says.
type NextAttempt struct {
	At time.Time
	// Running says an attempt is under way now.
	Running bool
}

// liveJob is a delivery's job that has not finished.
type liveJob struct {
	id    int64
	state string
	due   time.Time
}

func findLiveJobs(ctx context.Context, q db.DBTX, deliveryIDs []int64) (map[int64]liveJob, error) {
	rows, err := q.Query(ctx, liveJobs, deliveryIDs)
	if err != nil {
		return nil, fmt.Errorf("find the jobs of deliveries: %w", err)
	}
	jobs := map[int64]liveJob{}
	var (
		delivery int64
		j        liveJob
	)
	_, err = pgx.ForEachRow(rows, []any{&delivery, &j.id, &j.state, &j.due}, func() error {
		jobs[delivery] = j
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("find the jobs of deliveries: %w", err)
	}
	return jobs, nil
}

// nextAttempts says when each pending delivery among ds makes its next
// attempt; one with no job waiting (its last job ended, an admin's retry
// not yet queued) is left without.
func (s *Service) nextAttempts(ctx context.Context, ds []Listed) error {
	var pending []int64
	for _, d := range ds {
		if d.Status == StatusPending {
			pending = append(pending, d.ID)
		}
	}
	if len(pending) == 0 {
		return nil
	}
	jobs, err := findLiveJobs(ctx, s.pool, pending)
	if err != nil {
		return err
	}
	for i, d := range ds {
		if j, ok := jobs[d.ID]; ok {
			ds[i].Next = &NextAttempt{At: j.due.UTC(), Running: j.state == "running"}
		}
	}
	return nil
}

// RetryNow brings the next attempt of a pending delivery within scope
// forward to now, on behalf of who, with its audit event in the same
// transaction. A delivery that is not pending, whose attempt is under way,
// or outside scope is refused, the last as one that does not exist.
func (s *Service) RetryNow(ctx context.Context, who string, scope auth.Scope, id int64) error {
	status, err := s.StatusOf(ctx, scope, id)
	if err != nil {
		return err
	}
	if status != StatusPending {
		return apperr.New(apperr.Conflict, "not-pending", "delivery %d is %s, not pending: reload the page", id, status)
	}
	return db.WithPgxTx(ctx, s.pool, func(tx pgx.Tx) error {
		jobs, err := findLiveJobs(ctx, tx, []int64{id})
		if err != nil {
			return err
		}
		j, ok := jobs[id]
		switch {
		case !ok:
			return apperr.New(apperr.Conflict, "no-job", "delivery %d has no attempt waiting: reload the page", id)
		case j.state == "running":
			return apperr.New(apperr.Conflict, "attempt-running", "an attempt of delivery %d is under way now", id)
		}
		if _, err := s.river.JobRetryTx(ctx, tx, j.id); err != nil {
			return fmt.Errorf("bring delivery %d's attempt forward: %w", id, err)
		}
		return auditevent.Record(ctx, db.On(tx), who, scope.TenantFilter(), auditevent.DeliveryRetriedNow, map[string]any{
			"delivery_id": strconv.FormatInt(id, 10), "was_due": j.due.UTC(),
		})
	})
}
