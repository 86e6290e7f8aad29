package delivery

import (
	"context"
	"errors"
	"fmt"
	"strconv"

	"github.com/jackc/pgx/v5"

	"github.com/lefia/edihub/internal/apperr"
	"github.com/lefia/edihub/internal/auditevent"
	"github.com/lefia/edihub/internal/auth"
	"github.com/lefia/edihub/internal/db"
)

// cancelQueuedJobs cancels the River jobs of a destination's queue that
// are waiting to run, as River's JobCancel does for a job that is not
// running, in one statement for however many there are, and returns the
// ids of those running now, which River's JobCancel marks (see
// DeleteDestination). River's index on state and queue finds both; River's
// tables are not in edihub's migrations, where sqlc reads the schema, so
// the statement is here.
const cancelQueuedJobs = `
WITH waiting AS (
    UPDATE river_job SET state = 'cancelled', finalized_at = now()
    WHERE queue = $1 AND kind = 'delivery' AND state IN ('available', 'pending', 'retryable', 'scheduled')
)
SELECT id FROM river_job WHERE queue = $1 AND kind = 'delivery' AND state = 'running'`

// DeleteDestination deletes a destination within scope, on behalf of who,
// and returns how many deliveries it cancelled: the destination takes no
// new delivery and leaves every list, the deliveries it still owed
// (pending or failed) are cancelled with their queued jobs, and the
// deliveries it was made keep their history. All of it and the audit event
// happen in one transaction. A destination outside scope, or deleted
// already, is not found.
func (s *Service) DeleteDestination(ctx context.Context, who string, scope auth.Scope, destinationID int64) (int64, error) {
	var cancelled int64
	err := db.WithPgxTx(ctx, s.pool, func(tx pgx.Tx) error {
		q := db.On(tx)
		d, err := q.DestinationDelete(ctx, db.DestinationDeleteParams{ID: destinationID, ScopeTenantID: scope.TenantFilter()})
		if errors.Is(err, db.ErrNotFound) {
			return apperr.New(apperr.NotFound, "not-found", "destination %d does not exist", destinationID)
		}
		if err != nil {
			return fmt.Errorf("delete destination %d: %w", destinationID, err)
		}
		if cancelled, err = q.DeliveryCancelOfDestination(ctx, destinationID); err != nil {
			return fmt.Errorf("cancel the deliveries of destination %d: %w", destinationID, err)
		}
		rows, err := tx.Query(ctx, cancelQueuedJobs, QueueName(destinationID))
		if err != nil {
			return fmt.Errorf("cancel the jobs of destination %d: %w", destinationID, err)
		}
		running, err := pgx.CollectRows(rows, pgx.RowTo[int64])
		if err != nil {
			return fmt.Errorf("cancel the jobs of destination %d: %w", destinationID, err)
		}
		// A running job (at most the destination's limit per worker
		// process) is marked: River stops its attempt and, however it
		// ends, does not retry it. Should the attempt get an answer
		// first, DeliveryRecord keeps the delivery cancelled unless it
		// was delivered, and a run that still comes cancels itself
		// (worker.Work).
		for _, id := range running {
			if _, err := s.river.JobCancelTx(ctx, tx, id); err != nil {
				return fmt.Errorf("cancel job %d of destination %d: %w", id, destinationID, err)
			}
		}
		return auditevent.Record(ctx, q, who, &d.TenantID, auditevent.DestinationDeleted, map[string]any{
			"destination_id": strconv.FormatInt(destinationID, 10), "url": d.Url, "cancelled_deliveries": cancelled,
		})
	})
	return cancelled, err
}
