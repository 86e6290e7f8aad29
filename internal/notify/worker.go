package notify

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"

	"github.com/lefia/edihub/internal/backoff"
	"github.com/lefia/edihub/internal/config"
	"github.com/lefia/edihub/internal/db"
	"github.com/lefia/edihub/internal/delivery"
	"github.com/lefia/edihub/internal/egress"
	"github.com/lefia/edihub/internal/identifier"
)

// Workers is how many notifications one worker process sends at once.
const Workers = 4

// maxRetryWait caps the wait between two attempts: people should hear of an
// alert within the hour of a channel's coming back.
const maxRetryWait = time.Hour

// Worker sends one attempt of a notification per run of its job and
// records the answer on the notification's row.
type Worker struct {
	river.WorkerDefaults[Args]
	pool        *pgxpool.Pool
	sender      *Sender
	maxAttempts int
	retryBase   time.Duration
	timeout     time.Duration
}

// NewWorker returns the worker of the queue QueueName, to be registered on
// the process's River client.
func NewWorker(pool *pgxpool.Pool, cfg config.Notify, sender *Sender) *Worker {
	return &Worker{pool: pool, sender: sender, maxAttempts: cfg.MaxAttempts, retryBase: cfg.RetryBase, timeout: cfg.Timeout}
}

// Queue is the queue notifications are sent from, run by every process
// that runs delivery workers, on their River client, with the worker of
// its jobs.
func Queue(pool *pgxpool.Pool, cfg config.Notify, policy egress.Policy) delivery.Queue {
	w := NewWorker(pool, cfg, NewSender(cfg, policy))
	return delivery.Queue{
		Name: QueueName, MaxWorkers: Workers, JobTimeout: w.Timeout(nil),
		Register: func(workers *river.Workers) error { return river.AddWorkerSafely(workers, w) },
	}
}

// Timeout gives a job its attempt's timeout plus the time to record it.
func (w *Worker) Timeout(*river.Job[Args]) time.Duration { return w.timeout + 30*time.Second }

// NextRetry waits NOTIFY_RETRY_BASE after the first failed attempt, doubled
// after each further one, with jitter; the client's policy is the
// deliveries'.
func (w *Worker) NextRetry(job *river.Job[Args]) time.Time {
	return time.Now().Add(backoff.Jittered(w.retryBase, maxRetryWait, job.Attempt))
}

// Work makes one attempt and records it. A notification that is no longer
// pending (sent by a job that ran before, or failed) is left alone. A failed
// attempt is returned as an error, so that River runs the job again after
// NextRetry, until the notification's attempts reach NOTIFY_MAX_ATTEMPTS:
// then it is failed, and its job cancelled.
func (w *Worker) Work(ctx context.Context, job *river.Job[Args]) error {
	n, err := db.On(w.pool).NotificationGetForSend(ctx, job.Args.NotificationID)
	if errors.Is(err, db.ErrNotFound) {
		// Its channel was deleted, and it with it.
		return river.JobCancel(fmt.Errorf("notification %d does not exist", job.Args.NotificationID))
	}
	if err != nil {
		return fmt.Errorf("load notification %d: %w", job.Args.NotificationID, err)
	}
	if n.Status != StatusPending {
		return nil
	}
	a := w.sender.send(ctx, channelOf(n), messageOf(n))
	status := StatusPending
	switch {
	case a.Err == nil:
		status = StatusSent
	case int(n.Attempts)+1 >= w.maxAttempts:
		status = StatusFailed
	}
	if err := record(ctx, w.pool, n.ID, status, a); err != nil {
		return err
	}
	switch status {
	case StatusSent:
		return nil
	case StatusFailed:
		return river.JobCancel(a.Err)
	}
	return a.Err
}

// record keeps an attempt's answer on the notification. It is recorded even
// when the job's context was cancelled by a hard stop: the attempt
// happened.
func record(ctx context.Context, pool *pgxpool.Pool, id int64, status string, a Answer) error {
	var lastError string
	if a.Err != nil {
		lastError = identifier.Visible(a.Err.Error())
	}
	err := db.On(pool).NotificationRecordAttempt(context.WithoutCancel(ctx), db.NotificationRecordAttemptParams{
		ID: id, Status: status, LastError: lastError, LastAnswer: a.Said,
	})
	if err != nil {
		return fmt.Errorf("record attempt of notification %d: %w", id, err)
	}
	return nil
}

func channelOf(n db.NotificationGetForSendRow) Channel {
	ch := Channel{ID: n.ChannelID, Kind: n.Kind, Target: n.Target}
	if n.Secret != nil {
		ch.Secret = *n.Secret
	}
	return ch
}

func messageOf(n db.NotificationGetForSendRow) message {
	return message{ID: n.ID, AlertID: n.AlertID, Event: n.Event, Rule: n.Rule, Title: n.Title, Body: n.Body, Link: n.Link}
}
