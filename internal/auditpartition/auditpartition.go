// Package auditpartition keeps audit_events' partitions, one a month of
// created_at (migration 015): it adds the months ahead of the clock, so that
// an insert always finds its partition, and drops the months whose every
// event is older than the retention period, so that expiry deletes no row
// and leaves no dead rows for a vacuum that may never run. It takes only
// locks that inserts pass (docs/audit-events.md).
package auditpartition

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/lefia/edihub/internal/db"
)

// Ahead is how far past now the partitions reach after Maintain: two
// months, so that a server that cannot keep them for weeks still never
// refuses an insert. There is no DEFAULT partition to fall back on.
const Ahead = 62 * 24 * time.Hour

// LockTimeout bounds every wait for a lock. A DDL statement that waits
// queues every later insert behind it; past this it gives up, and the next
// round tries again.
const LockTimeout = 3 * time.Second

// Result is what one Maintain changed.
type Result struct {
	// Created and Dropped name the partitions added and dropped.
	Created, Dropped []string
	// Skipped is set when another server held the maintenance lock.
	Skipped bool
}

// Maintain adds partitions until they reach Ahead past now, and drops those
// whose range ends at or before now minus retention (zero keeps every
// partition). It runs on a connection of its own, which holds an advisory
// lock so that servers started together take turns; a server that finds it
// held does nothing. A partition is detached concurrently, while inserts go
// on, and then dropped; a detach cut short (a timeout, a lost connection) is
// finished by the next Maintain. A partition that blocked copies still
// refer to is not detached (blocked_copies_audit_event_fkey): that is an
// error, and Maintain stops there.
func Maintain(ctx context.Context, pool *pgxpool.Pool, now time.Time, retention time.Duration) (Result, error) {
	cfg := pool.Config().ConnConfig.Copy()
	cfg.RuntimeParams["lock_timeout"] = fmt.Sprint(LockTimeout.Milliseconds())
	conn, err := pgx.ConnectConfig(ctx, cfg)
	if err != nil {
		return Result{}, fmt.Errorf("connect: %w", err)
	}
	// Closing the connection releases the advisory lock, if unlocking
	// failed.
	defer conn.Close(context.WithoutCancel(ctx))
	q := db.On(conn)
	locked, err := q.AuditPartitionLock(ctx)
	if err != nil {
		return Result{}, fmt.Errorf("take the partition lock: %w", err)
	}
	if !locked {
		return Result{Skipped: true}, nil
	}
	defer func() { _ = q.AuditPartitionUnlock(context.WithoutCancel(ctx)) }()
	var r Result
	if err := r.add(ctx, q, now.Add(Ahead)); err != nil {
		return r, err
	}
	if retention > 0 {
		err = r.drop(ctx, conn, q, now.Add(-retention))
	}
	return r, err
}

// add adds the month after the newest partition until the newest reaches
// until.
func (r *Result) add(ctx context.Context, q *db.Queries, until time.Time) error {
	for {
		parts, err := q.AuditPartitionList(ctx)
		if err != nil {
			return fmt.Errorf("list partitions: %w", err)
		}
		if len(parts) == 0 {
			return fmt.Errorf("audit_events has no partition")
		}
		newest := parts[len(parts)-1].UpperBound
		if !newest.Before(until) {
			return nil
		}
		name, err := q.AuditPartitionAdd(ctx, newest)
		if err != nil {
			return fmt.Errorf("add the partition from %s: %w", newest.UTC().Format(time.DateOnly), err)
		}
		r.Created = append(r.Created, name)
	}
}

// drop detaches and drops every partition whose range ends at or before
// cutoff, oldest first, and finishes any detach left pending.
func (r *Result) drop(ctx context.Context, conn *pgx.Conn, q *db.Queries, cutoff time.Time) error {
	parts, err := q.AuditPartitionList(ctx)
	if err != nil {
		return fmt.Errorf("list partitions: %w", err)
	}
	for _, p := range parts {
		if !p.DetachPending && p.UpperBound.After(cutoff) {
			continue
		}
		name := pgx.Identifier{p.Name}.Sanitize()
		// DETACH ... CONCURRENTLY takes a lock that inserts pass and waits
		// for the queries that may still read the partition; it cannot run
		// in a transaction, nor after one that was cut short, which
		// FINALIZE completes instead.
		detach := "ALTER TABLE audit_events DETACH PARTITION " + name + " CONCURRENTLY"
		if p.DetachPending {
			detach = "ALTER TABLE audit_events DETACH PARTITION " + name + " FINALIZE"
		}
		if _, err := conn.Exec(ctx, detach); err != nil {
			return fmt.Errorf("detach partition %s: %w", p.Name, err)
		}
		if _, err := conn.Exec(ctx, "DROP TABLE "+name); err != nil {
			return fmt.Errorf("drop partition %s: %w", p.Name, err)
		}
		r.Dropped = append(r.Dropped, p.Name)
	}
	return nil
}
