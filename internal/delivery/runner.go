package delivery

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"

	"github.com/lefia/edihub/internal/config"
	"github.com/lefia/edihub/internal/db"
)

// Runner runs the delivery workers of one process: a River client with one
// queue per destination, with as many workers as the destination's
// concurrency limit. Any number of processes run Runners on one database;
// River's row locks give each job to one of them at a time, and the
// destination's leases (worker.takeLease) hold the limit across them.
type Runner struct {
	client  *river.Client[pgx.Tx]
	service *Service
	pool    *pgxpool.Pool
	log     *slog.Logger
	sync    time.Duration
	timeout time.Duration
	// queues is each destination's queue this process runs, with its
	// number of workers; only the Run goroutine touches it.
	queues map[int64]int32
}

// NewRunner builds a Runner. shutdown is how long Run lets running
// attempts finish after its context ends; attempts still running then are
// cancelled, recorded, and go back to the queue to be retried.
func NewRunner(pool *pgxpool.Pool, cfg config.Delivery, shutdown time.Duration, log *slog.Logger, observer Observer) (*Runner, error) {
	service := NewService(pool, cfg.MaxAttempts)
	workers := river.NewWorkers()
	if err := river.AddWorkerSafely(workers, newWorker(pool, cfg.Egress, cfg.Timeout, observer)); err != nil {
		return nil, err
	}
	if err := river.AddWorkerSafely(workers, &replayWorker{service: service}); err != nil {
		return nil, err
	}
	jobTimeout := cfg.Timeout + 30*time.Second
	client, err := river.NewClient(riverpgxv5.New(pool), &river.Config{
		// Bulk replays run on the default queue, one at a time per
		// process; destinations' queues are added as they are found.
		Queues:      map[string]river.QueueConfig{river.QueueDefault: {MaxWorkers: 1}},
		Workers:     workers,
		RetryPolicy: retryPolicy{base: cfg.RetryBase},
		MaxAttempts: cfg.MaxAttempts,
		JobTimeout:  jobTimeout,
		// A job left running by a process that died is worked again once
		// it has surely stopped, not after River's default of an hour.
		RescueStuckJobsAfter: jobTimeout + time.Minute,
		SoftStopTimeout:      shutdown,
		Logger:               log,
	})
	if err != nil {
		return nil, fmt.Errorf("river client: %w", err)
	}
	return &Runner{
		client: client, service: service, pool: pool, log: log,
		sync: cfg.SyncInterval, timeout: cfg.Timeout, queues: map[int64]int32{},
	}, nil
}

// Run works deliveries until ctx ends, then stops gracefully: no new
// attempt starts, running ones may finish within the shutdown time.
func (r *Runner) Run(ctx context.Context) error {
	if err := r.syncQueues(ctx); err != nil {
		if ctx.Err() != nil {
			// Stopped before the workers started: nothing runs to finish.
			return nil
		}
		return err
	}
	// The client gets a context of its own: ending ctx must let running
	// attempts finish, which is Stop's job, not cancel them.
	if err := r.client.Start(context.WithoutCancel(ctx)); err != nil {
		return fmt.Errorf("start delivery workers: %w", err)
	}
	r.log.Info("delivery workers started", "destinations", len(r.queues))
	ticker := time.NewTicker(r.sync)
	defer ticker.Stop()
	for {
		select {
		case <-ticker.C:
			if err := r.syncQueues(ctx); err != nil && ctx.Err() == nil {
				r.log.Error("find destinations", "error", err)
			}
		case <-ctx.Done():
			r.log.Info("stopping delivery workers: finishing running attempts")
			if err := r.client.Stop(context.WithoutCancel(ctx)); err != nil {
				return fmt.Errorf("stop delivery workers: %w", err)
			}
			r.log.Info("delivery workers stopped")
			return nil
		}
	}
}

// syncQueues starts a queue for every destination this process does not
// run yet and restarts the queues whose concurrency limit changed.
func (r *Runner) syncQueues(ctx context.Context) error {
	destinations, err := db.On(r.pool).DestinationListForWorkers(ctx)
	if err != nil {
		return fmt.Errorf("list destinations: %w", err)
	}
	for _, d := range destinations {
		workers, running := r.queues[d.ID]
		if running && workers == d.MaxConcurrency {
			continue
		}
		name := QueueName(d.ID)
		if running {
			// Removing waits for the queue's running attempts, which end
			// within the delivery timeout.
			removeCtx, cancel := context.WithTimeout(ctx, r.timeout+5*time.Second)
			err := r.client.Queues().Remove(removeCtx, name)
			cancel()
			if err != nil {
				return fmt.Errorf("restart queue %s: %w", name, err)
			}
			delete(r.queues, d.ID)
		}
		if d.Paused {
			// The queue must start paused, so that no attempt slips
			// through before the pause is seen.
			if err := db.WithPgxTx(ctx, r.pool, func(tx pgx.Tx) error {
				return r.service.pauseQueueTx(ctx, tx, d.ID, true)
			}); err != nil {
				return err
			}
		}
		if err := r.client.Queues().Add(name, river.QueueConfig{MaxWorkers: int(d.MaxConcurrency)}); err != nil {
			return fmt.Errorf("add queue %s: %w", name, err)
		}
		r.queues[d.ID] = d.MaxConcurrency
	}
	return nil
}
