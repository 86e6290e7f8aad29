package delivery

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"strconv"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"

	"github.com/lefia/edihub/internal/db"
	"github.com/lefia/edihub/internal/egress"
	"github.com/lefia/edihub/internal/identifier"
	"github.com/lefia/edihub/internal/signature"
)

// snippetBytes bounds the part of an answer's body kept with an attempt:
// enough for an error message, never a whole document.
const snippetBytes = 1024

// drainBytes bounds what is read past the snippet of an answer to keep its
// connection for the next attempt.
const drainBytes = 64 << 10

// pausedRecheck is how long a job that finds its destination paused waits
// before it looks again. Pausing also pauses the destination's queue, so
// this only catches a job fetched in the moment the pause was committed.
const pausedRecheck = 30 * time.Second

// leaseRecheck is about how long a job whose destination has no place free
// waits before it looks again (drawn between half and one and a half of
// it, so that waiting jobs do not all look at once).
const leaseRecheck = time.Second

// Outcomes of an attempt, as counted by the metrics.
const (
	OutcomeDelivered = "delivered"
	OutcomeRetry     = "retry"
	OutcomeFailed    = "failed"
)

// Observer is told the outcome of every attempt; the metrics implement it.
type Observer interface {
	ObserveDelivery(outcome string, duration time.Duration)
}

// worker makes one attempt of a delivery per run of its job.
type worker struct {
	river.WorkerDefaults[Args]
	// pool commits without waiting for the disk (workPool); durable is the
	// pool it was made from, whose commits wait.
	pool     *pgxpool.Pool
	durable  *pgxpool.Pool
	client   *http.Client
	timeout  time.Duration
	observer Observer
	places   places
	inFlight attemptsInFlight
}

// spareJobs is how many jobs beyond its limit a destination's queue runs
// in a process: they wait, loaded, for a place that this process's
// attempts hand on to them, so that a place does not stay empty while
// River completes the attempt before and fetches the next job (two round
// trips and its fetch loop), which cost a receiver that answers in 200 ms
// about a tenth of the limit.
func spareJobs(limit int32) int { return 1 + int(limit)/4 }

func newWorker(pool, durable *pgxpool.Pool, policy egress.Policy, timeout time.Duration, observer Observer) *worker {
	return &worker{pool: pool, durable: durable, client: policy.HTTPClient(timeout), timeout: timeout, observer: observer}
}

// Timeout gives a job its HTTP timeout plus the time to record the attempt.
func (w *worker) Timeout(*river.Job[Args]) time.Duration { return w.timeout + 30*time.Second }

// Work makes one attempt and records it: one round trip loads the delivery
// and takes a place of its destination (none when an attempt before hands
// its place on), one records the answer and hands the place on or gives it
// back. A 2xx answer marks the delivery delivered; River then
// completes the job. Should the process die between the two, the job runs
// again, finds the delivery delivered and sends nothing. Any other answer
// is returned as an error, so that River retries the job after the backoff
// of retryPolicy, until the last attempt marks the delivery failed.
func (w *worker) Work(ctx context.Context, job *river.Job[Args]) error {
	d, err := w.loadWithPlace(ctx, job)
	if errors.Is(err, db.ErrNotFound) {
		return river.JobCancel(fmt.Errorf("delivery %d does not exist", job.Args.DeliveryID))
	}
	if err != nil {
		return err
	}
	switch d.Status {
	case StatusDelivered:
		// An admin's retry can queue a job for a delivery that another job
		// has made meanwhile: there is nothing left to do.
		return nil
	case StatusCancelled:
		// Its destination was deleted while this job ran or was fetched.
		return river.JobCancel(fmt.Errorf("delivery %d was cancelled: its destination was deleted", d.ID))
	}
	defer w.inFlight.begin(d.DestinationID)()
	a := w.attempt(ctx, d)
	status := StatusPending
	switch {
	case a.delivered():
		status = StatusDelivered
	case job.Attempt >= job.MaxAttempts:
		status = StatusFailed
	}
	if err := w.record(ctx, d, a, status); err != nil {
		return err
	}
	if w.observer != nil {
		outcome := map[string]string{StatusDelivered: OutcomeDelivered, StatusPending: OutcomeRetry, StatusFailed: OutcomeFailed}[status]
		w.observer.ObserveDelivery(outcome, a.duration)
	}
	if status == StatusDelivered {
		return nil
	}
	return errors.New(a.err)
}

// loadWithPlace loads what an attempt of the job's delivery sends, with a
// place of its destination taken, unless the delivery is delivered or
// cancelled. When
// every place is taken, it waits up to leaseRecheck for an attempt of this
// process to hand its place on; past that, or when the destination is
// paused, it returns a snooze for River. Waiting uses up no attempt.
func (w *worker) loadWithPlace(ctx context.Context, job *river.Job[Args]) (db.DeliveryGetForAttemptRow, error) {
	destinationID, _ := destinationOfQueue(job.Queue)
	timer := time.NewTimer(leaseRecheck)
	defer timer.Stop()
	for {
		seen := w.places.returned(destinationID)
		d, leased, err := w.loadAndLease(ctx, job.Args.DeliveryID)
		switch {
		case err != nil, leased, d.Status == StatusDelivered:
			return d, err
		case d.Paused:
			return d, river.JobSnooze(pausedRecheck)
		}
		me := w.places.wait(destinationID, d.ID, seen)
		if me == nil {
			// A place was given back since this job looked.
			continue
		}
		select {
		case handed := <-me.handed:
			if handed {
				return d, nil
			}
			// A place was given back instead (the destination was
			// paused, or its limit lowered, or no job waited): look again.
			continue
		case <-timer.C:
			// Every place of the destination is taken by attempts in this
			// or other worker processes.
			if w.places.leave(destinationID, me) || !<-me.handed {
				return d, river.JobSnooze(leaseRecheck/2 + rand.N(leaseRecheck))
			}
			return d, nil
		case <-ctx.Done():
			// The process is stopping: the job goes back to wait for a
			// place in this or another process, and a place handed on to
			// it meanwhile goes back to the others.
			if !w.places.leave(destinationID, me) && <-me.handed {
				w.returnPlace(d)
			}
			return d, river.JobSnooze(0)
		}
	}
}

// returnPlace gives back the place a job holds without making its attempt.
// Should that fail, the place frees itself when its ttl runs out.
func (w *worker) returnPlace(d db.DeliveryGetForAttemptRow) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_ = db.On(w.pool).DeliveryPlaceReturn(ctx, db.DeliveryPlaceReturnParams{DeliveryID: d.ID, DestinationID: d.DestinationID})
}

// loadAndLease loads what an attempt of a delivery sends and takes one of
// its destination's places, reporting false when all are taken (or the
// delivery is no longer pending, or its destination paused), in one
// statement. The place is held for longer than the longest attempt (the
// job's timeout), so it is never lost to a slow answer, and frees itself
// if this process dies.
func (w *worker) loadAndLease(ctx context.Context, deliveryID int64) (db.DeliveryGetForAttemptRow, bool, error) {
	d, err := db.On(w.pool).DeliveryGetForAttempt(ctx, db.DeliveryGetForAttemptParams{
		ID: deliveryID, TtlSeconds: w.Timeout(nil).Seconds(),
	})
	if err != nil {
		return d, false, fmt.Errorf("load delivery %d and take a place: %w", deliveryID, err)
	}
	return d, d.Place >= 0, nil
}

// record keeps an attempt's answer and hands the destination's place on
// to the next job of this process waiting for one, or gives it back, in
// one statement of one round trip. The attempt is recorded even when the
// job's context was cancelled by a hard stop: the request happened, and
// the job goes back to the queue.
func (w *worker) record(ctx context.Context, d db.DeliveryGetForAttemptRow, a attempt, status string) error {
	ctx = context.WithoutCancel(ctx)
	next := w.places.next(d.DestinationID)
	params := db.DeliveryRecordParams{
		DeliveryID: d.ID, DestinationID: d.DestinationID, Status: status, Delivered: a.delivered(),
		StartedAt: a.started, DurationMs: int32(a.duration.Milliseconds()), ResponseStatus: a.status,
		Error: a.err, ResponseSnippet: a.snippet, TtlSeconds: w.Timeout(nil).Seconds(),
	}
	if next != nil {
		params.NextDeliveryID = &next.deliveryID
	}
	// The record waits for the disk, and the standby, although the work
	// pool's commits do not: River completes the job after Work returns,
	// and a completion made again after a crash or a failover, on a
	// database that lost a record committed without waiting, would leave
	// the delivery pending with no job to make it.
	handedOn, err := db.On(w.durable).DeliveryRecord(ctx, params)
	if errors.Is(err, db.ErrNotFound) {
		// The attempt outlived its place's ttl and another took it: the
		// record stands, and there was no place to hand on.
		err = nil
	}
	if next != nil {
		next.handed <- err == nil && handedOn
	}
	if err == nil && !handedOn {
		w.places.giveBack(d.DestinationID)
	}
	if err != nil {
		return fmt.Errorf("record attempt of delivery %d: %w", d.ID, err)
	}
	return nil
}

// attempt is what one HTTP attempt found out.
type attempt struct {
	started  time.Time
	duration time.Duration
	status   *int32 // nil when no answer came
	err      string
	snippet  string
}

func (a attempt) delivered() bool { return a.status != nil && *a.status >= 200 && *a.status < 300 }

func (w *worker) attempt(ctx context.Context, d db.DeliveryGetForAttemptRow) attempt {
	a := attempt{started: time.Now()}
	defer func() { a.duration = time.Since(a.started) }()
	req, err := w.request(ctx, d, a.started)
	if err != nil {
		a.err = err.Error()
		return a
	}
	resp, err := w.client.Do(req)
	a.duration = time.Since(a.started)
	if err != nil {
		a.err = err.Error()
		return a
	}
	defer resp.Body.Close()
	code := int32(resp.StatusCode)
	a.status = &code
	body, readErr := io.ReadAll(io.LimitReader(resp.Body, snippetBytes))
	// The rest of a short answer is read, so that its connection serves
	// the next attempt; a long one is cut off with its connection.
	_, _ = io.CopyN(io.Discard, resp.Body, drainBytes)
	// The answer is the receiver's to choose: text PostgreSQL cannot keep
	// (a NUL, invalid UTF-8) or that would mislead an admin's screen (a
	// right-to-left override, an escape sequence) is kept as escapes.
	a.snippet = identifier.Visible(string(body))
	if !a.delivered() {
		a.err = "the destination answered " + identifier.Visible(clip(resp.Status, snippetBytes))
	} else if readErr != nil {
		// The status is the destination's receipt; a body cut short
		// afterwards does not undo it.
		a.snippet += " (answer cut short: " + readErr.Error() + ")"
	}
	return a
}

// clip cuts s to at most n bytes.
func clip(s string, n int) string {
	if len(s) > n {
		return s[:n]
	}
	return s
}

// request builds the signed POST of a delivery's stored payload.
func (w *worker) request(ctx context.Context, d db.DeliveryGetForAttemptRow, now time.Time) (*http.Request, error) {
	body := d.Body
	id := WebhookID(d.MessageID, d.DestinationID)
	timestamp := now.Unix()
	sig, err := signature.SignStandardWebhooks(d.Secret, id, timestamp, body)
	if err != nil {
		return nil, fmt.Errorf("sign: %w", err)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, d.Url, bytes.NewReader(body))
	if err != nil {
		return nil, fmt.Errorf("build request: %w", err)
	}
	h := req.Header
	h.Set("Content-Type", d.ContentType)
	h.Set("User-Agent", "edihub")
	h.Set("webhook-id", id)
	h.Set("webhook-timestamp", strconv.FormatInt(timestamp, 10))
	h.Set("webhook-signature", sig)
	h.Set("Edihub-Message-Id", strconv.FormatInt(d.MessageID, 10))
	h.Set("Edihub-Message-Type", d.MessageTypeCode)
	if d.Docnum != nil {
		h.Set("Edihub-Docnum", *d.Docnum)
	}
	return req, nil
}
