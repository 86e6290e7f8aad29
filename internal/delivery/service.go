package delivery

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"

	"github.com/lefia/edihub/internal/apperr"
	"github.com/lefia/edihub/internal/auditevent"
	"github.com/lefia/edihub/internal/auth"
	"github.com/lefia/edihub/internal/db"
)

// Service writes deliveries and changes what River does with them: new
// messages' deliveries, pausing and resuming destinations.
type Service struct {
	pool        *pgxpool.Pool
	river       *river.Client[pgx.Tx]
	maxAttempts int
}

// NewService returns a Service whose jobs get maxAttempts attempts. Its
// River client only inserts jobs and pauses queues; workers run elsewhere
// (Runner).
func NewService(pool *pgxpool.Pool, maxAttempts int) *Service {
	client, err := river.NewClient(riverpgxv5.New(pool), &river.Config{})
	if err != nil {
		// River validates only the configuration, which is constant here.
		panic(fmt.Sprintf("river rejects an insert-only client: %v", err))
	}
	return &Service{pool: pool, river: client, maxAttempts: maxAttempts}
}

// EnqueueTx writes, inside tx, one delivery and its job for each of the
// messages and each destination that takes it, and returns how many. It is
// called in the transaction that stores the messages, so they commit or roll
// back together. Deliveries that already exist are not written again.
func (s *Service) EnqueueTx(ctx context.Context, tx pgx.Tx, messageIDs ...int64) (int, error) {
	if len(messageIDs) == 0 {
		return 0, nil
	}
	rows, err := db.On(tx).DeliveryCreateForMessages(ctx, messageIDs)
	if err != nil {
		return 0, fmt.Errorf("create deliveries: %w", err)
	}
	jobs := make([]river.InsertManyParams, len(rows))
	for i, r := range rows {
		jobs[i] = s.job(r.ID, r.DestinationID)
	}
	return s.queueTx(ctx, tx, jobs)
}

// QueueWrittenTx queues, inside tx, the jobs of deliveries that a
// statement of tx has already written (DeliveryCreateForStored, which
// ingest sends in the round trip that stores the messages), and returns
// how many.
func (s *Service) QueueWrittenTx(ctx context.Context, tx pgx.Tx, written []db.DeliveryCreateForStoredRow) (int, error) {
	jobs := make([]river.InsertManyParams, len(written))
	for i, w := range written {
		jobs[i] = s.job(w.ID, w.DestinationID)
	}
	return s.queueTx(ctx, tx, jobs)
}

// retryBatch is how many deliveries one transaction of a retry queues, so
// that retrying a long outage's thousands holds no long transaction.
const retryBatch = 500

// Retry gives the failed deliveries that match m, within scope, a new round
// of attempts, and returns how many it queued; deliveries that are not
// failed are not touched. It queues them in batches, each with its audit
// event by who in the same transaction, and each delivery at most once per
// call, even when one fails again meanwhile.
func (s *Service) Retry(ctx context.Context, who string, scope auth.Scope, m Match) (int, error) {
	total := 0
	var after int64
	for {
		var n int
		err := db.WithPgxTx(ctx, s.pool, func(tx pgx.Tx) error {
			q := db.On(tx)
			rows, err := q.DeliveryRequeueFailed(ctx, db.DeliveryRequeueFailedParams{
				AfterID: after, BatchSize: retryBatch, ScopeTenantID: scope.TenantFilter(),
				ID: m.ID, DestinationID: m.DestinationID, MessageType: m.MessageType, Since: m.Since, Until: m.Until,
			})
			if err != nil || len(rows) == 0 {
				return err
			}
			jobs := make([]river.InsertManyParams, len(rows))
			for i, r := range rows {
				jobs[i] = s.job(r.ID, r.DestinationID)
				after = max(after, r.ID)
			}
			if n, err = s.queueTx(ctx, tx, jobs); err != nil {
				return err
			}
			return auditevent.Record(ctx, q, who, scope.TenantFilter(), auditevent.DeliveriesRetried,
				map[string]any{"queued": n, "match": m})
		})
		if err != nil {
			return total, fmt.Errorf("requeue failed deliveries: %w", err)
		}
		if n == 0 {
			return total, nil
		}
		total += n
	}
}

// StatusOf is the status of delivery id within scope: pending, delivered
// or failed; a delivery outside scope is not found.
func (s *Service) StatusOf(ctx context.Context, scope auth.Scope, id int64) (string, error) {
	status, err := db.On(s.pool).DeliveryStatusOf(ctx, db.DeliveryStatusOfParams{ID: id, ScopeTenantID: scope.TenantFilter()})
	if errors.Is(err, db.ErrNotFound) {
		return "", apperr.New(apperr.NotFound, "not-found", "delivery %d does not exist", id)
	}
	if err != nil {
		return "", fmt.Errorf("read delivery %d: %w", id, err)
	}
	return status, nil
}

// job is the River job that makes a delivery, on its destination's queue.
func (s *Service) job(deliveryID, destinationID int64) river.InsertManyParams {
	return river.InsertManyParams{Args: Args{DeliveryID: deliveryID}, InsertOpts: insertOpts(destinationID, s.maxAttempts)}
}

func (s *Service) queueTx(ctx context.Context, tx pgx.Tx, jobs []river.InsertManyParams) (int, error) {
	if len(jobs) == 0 {
		return 0, nil
	}
	if _, err := s.river.InsertManyFastTx(ctx, tx, jobs); err != nil {
		return 0, fmt.Errorf("queue deliveries: %w", err)
	}
	return len(jobs), nil
}

// SetPaused pauses or resumes a destination within scope, on behalf of
// who. The flag, the destination's River queue and the audit event change
// in one transaction: a paused queue is fetched from by no worker process,
// and a resumed one at once. A destination outside scope is not found.
func (s *Service) SetPaused(ctx context.Context, who string, scope auth.Scope, destinationID int64, paused bool) error {
	return db.WithPgxTx(ctx, s.pool, func(tx pgx.Tx) error {
		q := db.On(tx)
		d, err := q.DestinationSetPaused(ctx, db.DestinationSetPausedParams{
			ID: destinationID, Paused: paused, ScopeTenantID: scope.TenantFilter(),
		})
		if errors.Is(err, db.ErrNotFound) {
			return apperr.New(apperr.NotFound, "not-found", "destination %d does not exist", destinationID)
		}
		if err != nil {
			return fmt.Errorf("set destination %d paused: %w", destinationID, err)
		}
		action := auditevent.DestinationResumed
		if paused {
			action = auditevent.DestinationPaused
		}
		if err := auditevent.Record(ctx, q, who, &d.TenantID, action,
			map[string]any{"destination_id": strconv.FormatInt(destinationID, 10)}); err != nil {
			return err
		}
		return s.pauseQueueTx(ctx, tx, destinationID, paused)
	})
}

// AutoPauseTx pauses, inside tx, a destination whose every attempt has
// failed for DESTINATION_AUTO_PAUSE_AFTER, on behalf of who, as an admin's
// pause would, and marks it auto-paused. It reports false when the
// destination is paused already.
func (s *Service) AutoPauseTx(ctx context.Context, tx pgx.Tx, who string, destinationID int64, now time.Time) (bool, error) {
	q := db.On(tx)
	d, err := q.DestinationAutoPause(ctx, db.DestinationAutoPauseParams{ID: destinationID, Now: now})
	if errors.Is(err, db.ErrNotFound) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("pause destination %d: %w", destinationID, err)
	}
	if err := auditevent.Record(ctx, q, who, &d.TenantID, auditevent.DestinationPaused,
		map[string]any{"destination_id": strconv.FormatInt(destinationID, 10), "automatic": true}); err != nil {
		return false, err
	}
	return true, s.pauseQueueTx(ctx, tx, destinationID, true)
}

// pauseQueueTx sets the paused state of a destination's queue, creating
// the queue's row first: River keeps a queue's state in a row that only
// exists once some worker process has run the queue.
func (s *Service) pauseQueueTx(ctx context.Context, tx pgx.Tx, destinationID int64, paused bool) error {
	name := QueueName(destinationID)
	if _, err := s.river.Driver().UnwrapExecutor(tx).QueueCreateOrSetUpdatedAt(ctx, &riverdriver.QueueCreateOrSetUpdatedAtParams{
		Name: name, Metadata: []byte("{}"),
	}); err != nil {
		return fmt.Errorf("create queue %s: %w", name, err)
	}
	var err error
	if paused {
		err = s.river.QueuePauseTx(ctx, tx, name, nil)
	} else {
		err = s.river.QueueResumeTx(ctx, tx, name, nil)
	}
	if err != nil {
		return fmt.Errorf("pause or resume queue %s: %w", name, err)
	}
	return nil
}
