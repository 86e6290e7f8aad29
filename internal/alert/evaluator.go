package alert

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/lefia/edihub/internal/adminpath"
	"github.com/lefia/edihub/internal/auditevent"
	"github.com/lefia/edihub/internal/config"
	"github.com/lefia/edihub/internal/db"
	"github.com/lefia/edihub/internal/notify"
)

// Pauser pauses a destination inside a transaction: package delivery's
// Service, which pauses its River queue with it.
type Pauser interface {
	AutoPauseTx(ctx context.Context, tx pgx.Tx, who string, destinationID int64, now time.Time) (bool, error)
}

// Evaluator evaluates the rules, one round at a time across every replica.
type Evaluator struct {
	pool      *pgxpool.Pool
	log       *slog.Logger
	rules     []rule
	renotify  time.Duration
	autoPause time.Duration
	pauser    Pauser
	now       func() time.Time
	// enqueue queues a notification in the transaction of the change it
	// tells of: notify.Enqueue.
	enqueue func(ctx context.Context, tx pgx.Tx, n notify.Notification) (int, error)
	// OnRule, when set, is told the outcome of every rule in every round,
	// for metrics.
	OnRule func(rule string, err error)
}

// Option changes a default of New.
type Option func(*Evaluator)

// WithClock makes the evaluator read the time from now instead of
// time.Now, so that tests can be hours ahead without waiting.
func WithClock(now func() time.Time) Option { return func(e *Evaluator) { e.now = now } }

// New returns an evaluator of the rules with cfg's thresholds, which pauses
// destinations through pauser.
func New(pool *pgxpool.Pool, log *slog.Logger, cfg config.Alerts, pauser Pauser, opts ...Option) *Evaluator {
	e := &Evaluator{
		pool: pool, log: log, rules: rules(cfg), renotify: cfg.Renotify, autoPause: cfg.AutoPauseAfter,
		pauser: pauser, now: time.Now, enqueue: notify.Enqueue,
	}
	for _, opt := range opts {
		opt(e)
	}
	return e
}

// Round is what one round did.
type Round struct {
	// Ran is false when another replica's round was running: this one
	// left the work to it.
	Ran                        bool
	Opened, Reminded, Resolved int
	Paused                     int
	// Failed names the rules (and steps) that failed; the others were
	// evaluated all the same.
	Failed []string
}

// roundTimeout bounds a round, so that a database that stops answering
// cannot hold the evaluator: the next round starts over.
const roundTimeout = time.Minute

// refusalsKept is how long the per-minute refusal counts are kept: far
// longer than intake.refusing reads, for an operator looking back.
const refusalsKept = 24 * time.Hour

// Evaluate runs one round: unless another replica's round runs, it pauses
// the destinations due for auto-pause, then evaluates every rule and opens,
// reminds and resolves alerts, notifying in the same transaction. Each step
// runs in a savepoint under a statement timeout, so a rule that fails or
// hangs is rolled back alone and the others go on.
func (e *Evaluator) Evaluate(ctx context.Context) (Round, error) {
	ctx, cancel := context.WithTimeout(ctx, roundTimeout)
	defer cancel()
	var round Round
	err := db.WithPgxTx(ctx, e.pool, func(tx pgx.Tx) error {
		q := db.On(tx)
		locked, err := q.AlertEvaluationLock(ctx)
		if err != nil || !locked {
			return err
		}
		if err := q.AlertEvaluationLimits(ctx); err != nil {
			return fmt.Errorf("limit the round's statements: %w", err)
		}
		round = Round{Ran: true}
		now := e.now()
		if e.autoPause > 0 {
			e.step(ctx, tx, "auto-pause", &round, func(tx pgx.Tx, r *Round) error { return e.pauseFailing(ctx, tx, now, r) })
		}
		for _, ru := range e.rules {
			e.step(ctx, tx, ru.name, &round, func(tx pgx.Tx, r *Round) error {
				findings, err := ru.find(ctx, db.On(tx), now)
				if err != nil {
					return err
				}
				return e.apply(ctx, tx, ru.name, findings, now, r)
			})
		}
		e.step(ctx, tx, "refusals-expiry", &round, func(tx pgx.Tx, _ *Round) error {
			return db.On(tx).IntakeRefusalDeleteBefore(ctx, now.Add(-refusalsKept))
		})
		return nil
	})
	if err != nil {
		return Round{}, fmt.Errorf("evaluate alert rules: %w", err)
	}
	return round, nil
}

// step runs fn in a savepoint of tx, counting into round only what a step
// that succeeded did.
func (e *Evaluator) step(ctx context.Context, tx pgx.Tx, name string, round *Round, fn func(tx pgx.Tx, r *Round) error) {
	var did Round
	sp, err := tx.Begin(ctx)
	if err == nil {
		if err = fn(sp, &did); err != nil {
			err = errors.Join(err, sp.Rollback(ctx))
		} else {
			err = sp.Commit(ctx)
		}
	}
	if e.OnRule != nil && slices.Contains(Rules, name) {
		e.OnRule(name, err)
	}
	if err != nil {
		round.Failed = append(round.Failed, name)
		e.log.Warn("alert rule failed; the others were evaluated", "rule", name, "error", err)
		return
	}
	round.Opened += did.Opened
	round.Reminded += did.Reminded
	round.Resolved += did.Resolved
	round.Paused += did.Paused
}

// pauseFailing pauses every destination whose attempts have all failed
// for DESTINATION_AUTO_PAUSE_AFTER; the rule destination.auto_paused then
// opens its alert in the same round.
func (e *Evaluator) pauseFailing(ctx context.Context, tx pgx.Tx, now time.Time, round *Round) error {
	ids, err := db.On(tx).DestinationListToAutoPause(ctx, now.Add(-e.autoPause))
	if err != nil {
		return fmt.Errorf("list destinations to pause: %w", err)
	}
	for _, id := range ids {
		paused, err := e.pauser.AutoPauseTx(ctx, tx, auditevent.ActorAlerts, id, now)
		if err != nil {
			return err
		}
		if paused {
			round.Paused++
			e.log.Warn("destination paused: every attempt failed", "destination_id", id, "after", e.autoPause)
		}
	}
	return nil
}

// apply brings a rule's alerts in line with what it found: a finding with
// no unresolved alert opens one, an open alert whose reminder is due is
// reminded, the others take the latest finding, and an alert whose subject
// was not found is resolved.
func (e *Evaluator) apply(ctx context.Context, tx pgx.Tx, ruleName string, findings []Finding, now time.Time, round *Round) error {
	q := db.On(tx)
	unresolved, err := q.AlertListUnresolvedOfRule(ctx, ruleName)
	if err != nil {
		return fmt.Errorf("list unresolved alerts: %w", err)
	}
	bySubject := make(map[Subject]db.AlertListUnresolvedOfRuleRow, len(unresolved))
	for _, a := range unresolved {
		bySubject[Subject{a.SubjectKind, a.SubjectKey}] = a
	}
	found := make(map[Subject]bool, len(findings))
	for _, f := range findings {
		if found[f.Subject] {
			continue
		}
		found[f.Subject] = true
		details, err := json.Marshal(f.Details)
		if err != nil {
			return fmt.Errorf("encode details: %w", err)
		}
		a, ok := bySubject[f.Subject]
		switch {
		case !ok:
			opened, err := e.open(ctx, tx, ruleName, f, details, now)
			if err != nil {
				return err
			}
			if opened {
				round.Opened++
			}
		case a.State == Open && !a.LastNotifiedAt.After(now.Add(-e.renotify)):
			id, err := q.AlertRemind(ctx, db.AlertRemindParams{
				ID: a.ID, Now: now, DueBefore: now.Add(-e.renotify), Title: f.Title, Details: details,
			})
			if errors.Is(err, db.ErrNotFound) {
				continue // another round reminded first
			}
			if err != nil {
				return fmt.Errorf("remind of alert %d: %w", a.ID, err)
			}
			if _, err := e.enqueue(ctx, tx, notification(id, a.TenantID, notify.EventReminder, ruleName, f.Title, f.Details.Lines)); err != nil {
				return err
			}
			round.Reminded++
		default:
			if err := q.AlertUpdateFinding(ctx, db.AlertUpdateFindingParams{ID: a.ID, Title: f.Title, Details: details}); err != nil {
				return fmt.Errorf("update alert %d: %w", a.ID, err)
			}
		}
	}
	for _, a := range unresolved {
		if found[Subject{a.SubjectKind, a.SubjectKey}] {
			continue
		}
		resolved, err := e.resolve(ctx, tx, a.ID, now)
		if err != nil {
			return err
		}
		if resolved {
			round.Resolved++
		}
	}
	return nil
}

// open opens an alert for f, records it and notifies, unless an unresolved
// alert of the rule and subject exists already: the unique index decides,
// so that of two rounds racing one opens and notifies, and the other
// returns false.
func (e *Evaluator) open(ctx context.Context, tx pgx.Tx, ruleName string, f Finding, details []byte, now time.Time) (bool, error) {
	q := db.On(tx)
	id, err := q.AlertOpen(ctx, db.AlertOpenParams{
		TenantID: f.TenantID, Rule: ruleName, SubjectKind: f.Subject.Kind, SubjectKey: f.Subject.Key,
		Title: f.Title, Details: details, Now: now,
	})
	if errors.Is(err, db.ErrNotFound) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("open %s alert: %w", ruleName, err)
	}
	if err := auditevent.Record(ctx, q, auditevent.ActorAlerts, f.TenantID, auditevent.AlertOpened, auditevent.AlertDetails{
		AlertID: id, Rule: ruleName, SubjectKind: f.Subject.Kind, SubjectKey: f.Subject.Key, Title: f.Title,
	}); err != nil {
		return false, err
	}
	_, err = e.enqueue(ctx, tx, notification(id, f.TenantID, notify.EventOpened, ruleName, f.Title, f.Details.Lines))
	return err == nil, err
}

// resolve resolves an alert whose condition cleared, records it and says
// so once; false when another round resolved it first.
func (e *Evaluator) resolve(ctx context.Context, tx pgx.Tx, id int64, now time.Time) (bool, error) {
	q := db.On(tx)
	a, err := q.AlertResolve(ctx, db.AlertResolveParams{ID: id, Now: now})
	if errors.Is(err, db.ErrNotFound) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("resolve alert %d: %w", id, err)
	}
	if err := auditevent.Record(ctx, q, auditevent.ActorAlerts, a.TenantID, auditevent.AlertResolved, auditevent.AlertDetails{
		AlertID: a.ID, Rule: a.Rule, SubjectKind: a.SubjectKind, SubjectKey: a.SubjectKey, Title: a.Title,
	}); err != nil {
		return false, err
	}
	var last Details
	_ = json.Unmarshal(a.Details, &last) // written by apply; a bad one only loses the lines
	lines := append([]string{"resolved " + timeText(now) + ": the condition cleared"}, last.Lines...)
	_, err = e.enqueue(ctx, tx, notification(a.ID, a.TenantID, notify.EventResolved, a.Rule, a.Title, lines))
	return err == nil, err
}

// Run evaluates a round every interval until ctx ends. A round that fails
// is logged, and the next one starts over.
func (e *Evaluator) Run(ctx context.Context, interval time.Duration) {
	ticker := time.NewTicker(interval)
	defer ticker.Stop()
	for {
		if _, err := e.Evaluate(ctx); err != nil && ctx.Err() == nil {
			e.log.Warn("alert round failed", "error", err)
		}
		select {
		case <-ctx.Done():
			return
		case <-ticker.C:
		}
	}
}

// notification is what the channels are told of an alert's change; it
// links to the alert's admin page.
func notification(id int64, tenantID *int64, event, rule, title string, lines []string) notify.Notification {
	return notify.Notification{
		TenantID: tenantID, AlertID: id, Event: event, Rule: rule, Title: title, Lines: lines,
		Link: adminpath.Path(adminpath.Alert, id),
	}
}
