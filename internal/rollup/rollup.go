// Package rollup keeps the dashboard's traffic counts (migration 016): it
// adds the messages received and the duplicates blocked since a watermark
// to per-hour totals and moves the watermark, so that the dashboard reads
// hours, plus the short tail since the watermark, instead of a week of rows.
//
// A row is stamped with the start of the transaction that writes it
// (received_at, created_at), so it may commit after time has passed its
// stamp. A step therefore rolls up only to below the oldest transaction in
// progress and lag below now (TrafficRollupTarget), and never counts a row
// twice: the hours and the watermark move in one transaction. Ingest writes
// no counter, so concurrent inserts never wait for each other.
package rollup

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/lefia/edihub/internal/db"
)

const (
	// Interval is how often Run rolls up: the dashboard counts at most about
	// this much traffic, plus the lag, from the tables themselves.
	Interval = time.Minute
	// Span is the most time one step covers, so that a backlog (the first
	// step on a database that has traffic already) is rolled up in short
	// transactions rather than one that reads the whole history.
	Span = 24 * time.Hour
)

// Roller rolls traffic up.
type Roller struct {
	pool *pgxpool.Pool
	log  *slog.Logger
	lag  time.Duration
	// OnRound, when set, is told the outcome of every round, for metrics.
	OnRound func(err error)
}

// New returns a Roller on pool that leaves the last lag of traffic to the
// next step: the longest a transaction of a session it cannot see in
// pg_stat_activity (another role's) may take to commit.
func New(pool *pgxpool.Pool, log *slog.Logger, lag time.Duration) *Roller {
	return &Roller{pool: pool, log: log, lag: lag}
}

// Step rolls up at most one Span after the watermark, in one transaction,
// and says whether there is more to roll up already. It does nothing when
// another step (another replica's) is running.
func (r *Roller) Step(ctx context.Context) (more bool, err error) {
	q := db.On(r.pool)
	target, err := q.TrafficRollupTarget(ctx, r.lag.Seconds())
	if err != nil {
		return false, fmt.Errorf("find how far to roll up: %w", err)
	}
	err = db.WithTx(ctx, r.pool, func(q *db.Queries) error {
		locked, err := q.TrafficRollupLock(ctx)
		if err != nil || !locked {
			return err
		}
		start, err := q.TrafficRollupStart(ctx, target)
		if err != nil {
			return fmt.Errorf("read the watermark: %w", err)
		}
		upto := start.Add(Span)
		if target.Before(upto) {
			upto = target
		}
		if !upto.After(start) {
			return nil
		}
		if err := q.TrafficRollupMessages(ctx, db.TrafficRollupMessagesParams{FromTime: start, Upto: upto}); err != nil {
			return fmt.Errorf("roll up messages: %w", err)
		}
		if err := q.TrafficRollupBlocked(ctx, db.TrafficRollupBlockedParams{FromTime: start, Upto: upto}); err != nil {
			return fmt.Errorf("roll up blocked duplicates: %w", err)
		}
		if err := q.TrafficRollupAdvance(ctx, upto); err != nil {
			return fmt.Errorf("move the watermark: %w", err)
		}
		more = upto.Before(target)
		return nil
	})
	return more && err == nil, err
}

// CatchUp steps until nothing is left to roll up.
func (r *Roller) CatchUp(ctx context.Context) error {
	for {
		more, err := r.Step(ctx)
		if err != nil || !more {
			return err
		}
	}
}

// Run catches up every Interval until ctx ends. A failed round is logged
// and the next one tries again: the dashboard counts what a missed round
// left from the tables, exactly, only slower. Every round's outcome is
// recorded, so that rounds failing in a row raise an alert
// (housekeeping.failing).
func (r *Roller) Run(ctx context.Context) {
	ticker := time.NewTicker(Interval)
	defer ticker.Stop()
	for {
		r.Round(ctx)
		select {
		case <-ctx.Done():
			return
		case <-ticker.C:
		}
	}
}

// CountLate counts a message stored with a received_at of the past (a
// released blocked copy keeps the time it arrived) when the watermark has
// passed it already, since no step will. q is the transaction that stored
// the message; it keeps steps waiting until it ends.
func CountLate(ctx context.Context, q *db.Queries, tenantID, messageID int64) error {
	if err := q.TrafficRollupLateLock(ctx); err != nil {
		return fmt.Errorf("wait for the traffic rollup: %w", err)
	}
	if err := q.TrafficRollupLateMessage(ctx, db.TrafficRollupLateMessageParams{TenantID: tenantID, ID: messageID}); err != nil {
		return fmt.Errorf("count a late message: %w", err)
	}
	return nil
}

// Round catches up once and records the outcome; a round cut short by ctx
// (shutting down) is not an outcome.
func (r *Roller) Round(ctx context.Context) {
	err := r.CatchUp(ctx)
	if ctx.Err() != nil {
		return
	}
	if err != nil {
		r.log.Warn("traffic rollup failed", "error", err)
	}
	if r.OnRound != nil {
		r.OnRound(err)
	}
	errText := ""
	if err != nil {
		errText = err.Error()
	}
	if rerr := db.On(r.pool).TrafficRollupRecordRound(ctx, errText); rerr != nil {
		r.log.Warn("record the traffic rollup's round", "error", rerr)
	}
}
