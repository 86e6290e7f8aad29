package delivery

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"

	"github.com/lefia/edihub/internal/config"
	"github.com/lefia/edihub/internal/db"
	"github.com/lefia/edihub/internal/pglisten"
)

// Runner runs the delivery workers of one process: a River client with one
// queue per destination, with as many workers as the destination's
// concurrency limit and a few spare ones that wait for a place. Any number
// of processes run Runners on one database; River's row locks give each
// job to one of them at a time, and the destination's places
// (worker.loadAndLease) hold the limit across them.
//
// A queue runs only while its destination has pending deliveries: each
// running queue polls the database, so running one per configured
// destination would make idle cost grow with configuration. A queue starts
// when River announces a job for it (the listener) or when the sweep every
// DELIVERY_SYNC_INTERVAL finds pending deliveries for it, and stops when a
// sweep finds none, or the destination gone.
type Runner struct {
	client  *river.Client[pgx.Tx]
	service *Service
	// pool is the process's own pool of connections for delivery work
	// (workPool); Run closes it.
	pool    *pgxpool.Pool
	log     *slog.Logger
	sync    time.Duration
	timeout time.Duration
	// inFlight are the worker's attempts in flight, by destination.
	inFlight *attemptsInFlight
	// queues is each destination's queue this process runs; only the Run
	// goroutine touches it. running is its size, for anyone to read.
	queues  map[int64]*runningQueue
	running atomic.Int64
	// woken carries, from the listener to Run, the destinations whose queue
	// River announced a job for.
	woken chan int64
	// resync asks Run for a sweep now: the listener listens again, and
	// announcements made meanwhile were lost.
	resync chan struct{}
	// discarded is up to when the sweeps have failed the deliveries of
	// discarded jobs; only the Run goroutine touches it.
	discarded discardedWatch
}

// runningQueue is a destination's queue that this process runs.
type runningQueue struct {
	workers int32
	// busyAt is when a job was last announced for the queue or a sweep
	// last found pending deliveries: a queue is stopped as idle only a
	// sweep interval after, so that a job announced just before a sweep
	// that did not see it yet is not left without a worker.
	busyAt time.Time
	// limitChangedAt is when a sweep first found the destination's limit
	// other than the queue's workers were made for; zero while they agree.
	limitChangedAt time.Time
}

// Queue is other work that runs on the delivery workers' River client: a
// queue that always runs, and the worker of its jobs, which sets its own
// timeout and retries (river.Worker's Timeout and NextRetry). A process has
// one River client: River's maintenance (rescuing stuck jobs, deleting
// finished ones) runs on the client that leads, with that client's
// settings, for every queue, so a second client could lead with others.
type Queue struct {
	Name       string
	MaxWorkers int
	// JobTimeout is the longest one of its jobs runs, so that no running
	// job is taken for a stuck one.
	JobTimeout time.Duration
	// Register adds the queue's worker to the client's workers.
	Register func(*river.Workers) error
}

// NewRunner builds a Runner, which also runs the queues extra. shutdown is
// how long Run lets running attempts finish after its context ends;
// attempts still running then are cancelled, recorded, and go back to the
// queue to be retried.
func NewRunner(pool *pgxpool.Pool, cfg config.Delivery, shutdown time.Duration, log *slog.Logger, observer Observer, extra ...Queue) (*Runner, error) {
	// Bulk replays requeue failed deliveries on the caller's pool: an
	// admin's retry, once reported queued, stays queued.
	service := NewService(pool, cfg.MaxAttempts)
	work, err := workPool(pool)
	if err != nil {
		return nil, err
	}
	r, err := newRunner(work, pool, service, cfg, shutdown, log, observer, extra)
	if err != nil {
		work.Close()
		return nil, err
	}
	return r, nil
}

func newRunner(work, durable *pgxpool.Pool, service *Service, cfg config.Delivery, shutdown time.Duration, log *slog.Logger,
	observer Observer, extra []Queue,
) (*Runner, error) {
	workers := river.NewWorkers()
	attempts := newWorker(work, durable, cfg.Egress, cfg.Timeout, observer)
	if err := river.AddWorkerSafely(workers, attempts); err != nil {
		return nil, err
	}
	if err := river.AddWorkerSafely(workers, &replayWorker{service: service}); err != nil {
		return nil, err
	}
	// Bulk replays run on the default queue, one at a time per process;
	// destinations' queues are added as they are found.
	queues := map[string]river.QueueConfig{river.QueueDefault: {MaxWorkers: 1}}
	jobTimeout := cfg.Timeout + 30*time.Second
	longest := jobTimeout
	for _, q := range extra {
		longest = max(longest, q.JobTimeout)
		if err := q.Register(workers); err != nil {
			return nil, err
		}
		queues[q.Name] = river.QueueConfig{MaxWorkers: q.MaxWorkers}
	}
	client, err := river.NewClient(riverpgxv5.New(work), &river.Config{
		Queues:      queues,
		Workers:     workers,
		RetryPolicy: retryPolicy{base: cfg.RetryBase},
		MaxAttempts: cfg.MaxAttempts,
		JobTimeout:  jobTimeout,
		// A job left running by a process that died is worked again once
		// it has surely stopped, not after River's default of an hour.
		RescueStuckJobsAfter: longest + time.Minute,
		SoftStopTimeout:      shutdown,
		Logger:               slog.New(quietLog{log.Handler()}),
	})
	if err != nil {
		return nil, fmt.Errorf("river client: %w", err)
	}
	return &Runner{
		client: client, service: service, pool: work, log: log, inFlight: &attempts.inFlight,
		sync: cfg.SyncInterval, timeout: cfg.Timeout, queues: map[int64]*runningQueue{},
		woken: make(chan int64, wokenBacklog), resync: make(chan struct{}, 1),
	}, nil
}

// workPool opens a pool like pool whose transactions commit without
// waiting for their WAL to reach the disk (synchronous_commit off), for
// the writes of delivery work: River fetching and completing jobs, an
// attempt taking and giving back a place of its destination, recording
// its answer. Waiting for the disk cost an attempt about four flushes, one
// of them while holding its destination's lock, which made every
// destination as slow as the disk whatever its limit.
//
// A commit that returned and is then lost in a crash of PostgreSQL or a
// failover (never when a backend is killed or the server is stopped or
// restarted) costs an attempt made again with the same webhook-id, as a
// worker process killed mid-attempt does, or a place of the destination
// held until its time runs out: what matters is written with synchronous
// commit elsewhere. A delivery and its job are written by the transaction
// that stores the message, so one acknowledged is never lost, and an
// attempt's record waits for the disk (worker.record), since River's
// completion of its job, which may be made again on the new primary after
// a failover, must never find the record gone.
func workPool(pool *pgxpool.Pool) (*pgxpool.Pool, error) {
	cfg := pool.Config()
	if cfg.ConnConfig.RuntimeParams == nil {
		cfg.ConnConfig.RuntimeParams = map[string]string{}
	}
	cfg.ConnConfig.RuntimeParams["synchronous_commit"] = "off"
	work, err := pgxpool.NewWithConfig(context.Background(), cfg)
	if err != nil {
		return nil, fmt.Errorf("delivery workers' pool: %w", err)
	}
	return work, nil
}

// fetchCooldown is the least time between two fetches of a destination's
// queue. A queue fetches only as many jobs as it has free workers and then
// waits out the cooldown, so River's default of 100 ms capped a destination
// at its limit's number of deliveries per 100 ms however fast it answered
// (docs/performance.md). A fetch is a statement on the queue's few rows of
// the job table's fetching index, so the queue may fetch again as soon as a
// worker is free.
const fetchCooldown = time.Millisecond

// wokenBacklog bounds the announcements waiting for Run; one announced
// when it is full is dropped and found by the next sweep instead.
const wokenBacklog = 1024

// Run works deliveries until ctx ends, then stops gracefully: no new
// attempt starts, running ones may finish within the shutdown time.
func (r *Runner) Run(ctx context.Context) error {
	defer r.pool.Close()
	channel, err := r.startWorkers(ctx)
	if err != nil {
		if ctx.Err() != nil {
			// Stopped before the workers started: nothing runs to finish.
			return nil
		}
		return err
	}
	listenCtx, stopListening := context.WithCancel(ctx)
	defer stopListening()
	go pglisten.Listen(listenCtx, r.pool, channel, r, r.log,
		"delivery workers find new deliveries every DELIVERY_SYNC_INTERVAL meanwhile")
	r.log.Info("delivery workers started", "destinations_with_pending_deliveries", len(r.queues))
	ticker := time.NewTicker(r.sync)
	defer ticker.Stop()
	for {
		var err error
		select {
		case <-ticker.C:
			err = r.sweep(ctx)
		case <-r.resync:
			err = r.sweep(ctx)
		case id := <-r.woken:
			err = r.wake(ctx, id)
		case <-ctx.Done():
			r.log.Info("stopping delivery workers: finishing running attempts")
			if err := r.client.Stop(context.WithoutCancel(ctx)); err != nil {
				return fmt.Errorf("stop delivery workers: %w", err)
			}
			r.log.Info("delivery workers stopped")
			return nil
		}
		if err != nil && ctx.Err() == nil {
			r.log.Error("run destination queues", "error", err)
		}
	}
}

// insertChannel is where River announces jobs given to a queue, with the
// payload {"queue": "<name>"}: River's "<schema>.river_insert", sent by the
// transaction that inserts the jobs as it commits.
func (r *Runner) insertChannel(ctx context.Context) (string, error) {
	var schema string
	if err := r.pool.QueryRow(ctx, "SELECT current_schema()").Scan(&schema); err != nil {
		return "", fmt.Errorf("find River's schema: %w", err)
	}
	return schema + ".river_insert", nil
}

// Listening asks for a sweep: jobs announced while nothing listened were
// announced to no one.
func (r *Runner) Listening() {
	select {
	case r.resync <- struct{}{}:
	default:
	}
}

// Notified passes a destination's announced job on to Run, without ever
// waiting for it.
func (r *Runner) Notified(payload string) {
	var n struct {
		Queue string `json:"queue"`
	}
	if json.Unmarshal([]byte(payload), &n) != nil {
		return
	}
	id, ok := destinationOfQueue(n.Queue)
	if !ok {
		return
	}
	select {
	case r.woken <- id:
	default:
	}
}

// wake runs the queue of a destination that River announced a job for.
func (r *Runner) wake(ctx context.Context, id int64) error {
	if q, running := r.queues[id]; running {
		q.busyAt = time.Now()
		return nil
	}
	d, err := db.On(r.pool).DestinationGetForWorkers(ctx, id)
	if errors.Is(err, db.ErrNotFound) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("load destination %d: %w", id, err)
	}
	return r.start(ctx, d.ID, d.Paused, d.MaxConcurrency)
}

// sweep starts the queue of every destination with pending deliveries that
// this process does not run yet, restarts the queues whose concurrency
// limit changed, stops the queues of destinations that have had no
// pending delivery for a sweep interval or are gone, and fails the
// deliveries whose job River discarded (checkDiscarded).
func (r *Runner) sweep(ctx context.Context) error {
	destinations, err := db.On(r.pool).DestinationListForWorkers(ctx)
	if err != nil {
		return fmt.Errorf("list destinations: %w", err)
	}
	listed := make(map[int64]bool, len(destinations))
	for _, d := range destinations {
		listed[d.ID] = true
		q, running := r.queues[d.ID]
		// A queue whose restart for a new limit waits is kept, or stopped
		// when idle, as any other.
		remake := running && r.remakeNow(q, d.ID, d.MaxConcurrency, time.Now())
		switch {
		case remake:
			if err := r.stop(ctx, d.ID); err != nil {
				return err
			}
			if err := r.start(ctx, d.ID, d.Paused, d.MaxConcurrency); err != nil {
				return err
			}
		case running && d.HasPending:
			q.busyAt = time.Now()
		case running && time.Since(q.busyAt) > r.sync:
			if err := r.stop(ctx, d.ID); err != nil {
				return err
			}
		case !running && d.HasPending:
			if err := r.start(ctx, d.ID, d.Paused, d.MaxConcurrency); err != nil {
				return err
			}
		}
	}
	for id := range r.queues {
		if !listed[id] {
			if err := r.stop(ctx, id); err != nil {
				return err
			}
		}
	}
	return r.checkDiscarded(ctx, time.Now())
}

// remakeNow tells whether queue q must be remade now for limit, its
// destination id's: when limit is not what its workers were made for, and
// no attempt of the destination is in flight in this process or an
// attempt timeout has passed since the change was first seen. Removing the
// queue would wait for that attempt, which a destination that hangs makes
// last the whole timeout, and River starts no other queue in the process
// meanwhile. Until the restart the destination's places, rows in the
// database, hold every process to the new limit, and the queue's spare
// jobs (spareJobs) take a raised limit's first new places. A change that
// is undone before the restart is forgotten.
func (r *Runner) remakeNow(q *runningQueue, id int64, limit int32, now time.Time) bool {
	if q.workers == limit {
		q.limitChangedAt = time.Time{}
		return false
	}
	if q.limitChangedAt.IsZero() {
		q.limitChangedAt = now
	}
	return !r.inFlight.any(id) || now.Sub(q.limitChangedAt) >= r.timeout
}

// start runs a destination's queue with its limit's number of workers and
// a few spare ones (spareJobs).
func (r *Runner) start(ctx context.Context, id int64, paused bool, workers int32) error {
	name := QueueName(id)
	if paused {
		// The queue must start paused, so that no attempt slips through
		// before the pause is seen.
		if err := db.WithPgxTx(ctx, r.pool, func(tx pgx.Tx) error {
			return r.service.pauseQueueTx(ctx, tx, id, true)
		}); err != nil {
			return err
		}
	}
	if err := r.client.Queues().Add(name, river.QueueConfig{MaxWorkers: int(workers) + spareJobs(workers), FetchCooldown: fetchCooldown}); err != nil {
		return fmt.Errorf("add queue %s: %w", name, err)
	}
	r.queues[id] = &runningQueue{workers: workers, busyAt: time.Now()}
	r.running.Store(int64(len(r.queues)))
	return nil
}

// AcquireCount is how many times the process's delivery work has taken a
// connection from its pool.
func (r *Runner) AcquireCount() int64 { return r.pool.Stat().AcquireCount() }

// startRetry is how long a start that found the database unavailable
// waits before it tries again.
const startRetry = time.Second

// startWorkers finds River's notification channel and the destinations with
// pending deliveries, and starts the workers. While the database is
// unavailable (a failover, a restart, a killed backend) it tries again
// every startRetry until ctx ends, so that a worker started during an
// outage waits it out instead of exiting; any other error is returned.
func (r *Runner) startWorkers(ctx context.Context) (string, error) {
	for {
		channel, err := r.insertChannel(ctx)
		if err == nil {
			err = r.sweep(ctx)
		}
		if err == nil {
			// The client gets a context of its own: ending ctx must let
			// running attempts finish, which is Stop's job, not cancel them.
			if err = r.client.Start(context.WithoutCancel(ctx)); err != nil {
				err = fmt.Errorf("start delivery workers: %w", err)
			}
		}
		if err == nil || !db.IsUnavailable(err) {
			return channel, err
		}
		r.log.Warn("delivery workers wait for the database", "error", err, "retry_in", startRetry)
		select {
		case <-ctx.Done():
			return "", ctx.Err()
		case <-time.After(startRetry):
		}
	}
}

// RunningQueues is how many destinations' queues the process runs now:
// those with pending deliveries, not every destination.
func (r *Runner) RunningQueues() int { return int(r.running.Load()) }

// stop ends a destination's queue. It waits for the queue's running
// attempts, which end within the delivery timeout.
func (r *Runner) stop(ctx context.Context, id int64) error {
	name := QueueName(id)
	removeCtx, cancel := context.WithTimeout(ctx, r.timeout+5*time.Second)
	defer cancel()
	if err := r.client.Queues().Remove(removeCtx, name); err != nil {
		return fmt.Errorf("stop queue %s: %w", name, err)
	}
	delete(r.queues, id)
	r.running.Store(int64(len(r.queues)))
	return nil
}
