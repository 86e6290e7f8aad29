// Package retention removes data past its retention period: idempotency
// keys past IDEMPOTENCY_KEY_TTL, then messages, blocked copies and delivery
// attempts past their RETENTION_… periods, and the months of audit events
// past RETENTION_AUDIT_EVENTS (internal/auditpartition). It deletes in
// small batches, each its own short transaction that skips rows others hold, so that a large
// backlog never holds locks or a long transaction that ingest waits on, and
// several replicas may sweep at once.
package retention

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/lefia/edihub/internal/auditpartition"
	"github.com/lefia/edihub/internal/config"
	"github.com/lefia/edihub/internal/db"
	"github.com/lefia/edihub/internal/messagetype"
)

// Kind names a kind of data that expires, as the metrics, the log and the
// admin's retention page name it.
type Kind string

const (
	IdempotencyKeys  Kind = "idempotency_keys"
	Interchanges     Kind = "interchanges"
	Messages         Kind = "messages"
	BlockedCopies    Kind = "blocked_copies"
	DeliveryAttempts Kind = "delivery_attempts"
	// AuditEvents expire a month at a time: what its sweep removed counts
	// the months' partitions dropped (internal/auditpartition).
	AuditEvents Kind = "audit_events"
)

// kinds are the kinds this package sweeps, in the order of its steps, which
// is also the order the admin lists them in.
var kinds = []Kind{IdempotencyKeys, Interchanges, Messages, BlockedCopies, DeliveryAttempts, AuditEvents}

// Grace is added to a message's effective retention before it is deleted.
// An ingest transaction that has just judged a message inside its duplicate
// window goes on to record a blocked copy that points at it; the grace,
// far longer than any request may run (REQUEST_TIMEOUT), keeps the message
// there until that transaction is long over.
const Grace = time.Hour

// Policy is what the sweeper keeps: the configured periods (zero: keep
// forever) and IDEMPOTENCY_KEY_TTL, below which no message goes, because an
// unexpired key points at its message and a retry after the message were
// gone would be stored again.
type Policy struct {
	Periods config.Retention
	KeyTTL  time.Duration
	// InterchangeWindow is INTERCHANGE_WINDOW: an interchange's row, which
	// decides its repeats within the window, goes after it.
	InterchangeWindow time.Duration
}

// MessageRetention is how long a tenant's messages are kept, and why.
type MessageRetention struct {
	Period time.Duration
	// Reason says what set Period: "configured" (RETENTION_MESSAGES),
	// "window" (the duplicate window of WindowType) or "key_ttl"
	// (IDEMPOTENCY_KEY_TTL). Off when message expiry is switched off.
	Reason     string
	WindowType string
	Off        bool
}

// MessageRetention is the effective retention of the messages of a tenant
// whose longest duplicate window is windowHours, that of its type
// windowType ("" and 0 when it has no type): the longest of
// RETENTION_MESSAGES, that window and IDEMPOTENCY_KEY_TTL, so that expiry
// never lets a duplicate through. MessageExpireLock applies the same rule
// in SQL; a test holds the two together.
func (p Policy) MessageRetention(windowType string, windowHours int) MessageRetention {
	if p.Periods.Messages == 0 {
		return MessageRetention{Off: true, Reason: "configured"}
	}
	r := MessageRetention{Period: p.Periods.Messages, Reason: "configured"}
	if w := time.Duration(windowHours) * time.Hour; w > r.Period {
		r = MessageRetention{Period: w, Reason: "window", WindowType: windowType}
	}
	if p.KeyTTL > r.Period {
		r = MessageRetention{Period: p.KeyTTL, Reason: "key_ttl"}
	}
	return r
}

// Removed counts the rows a sweep removed, by kind.
type Removed map[Kind]int64

// step is one kind of data the sweeper expires. batch removes at most one
// batch in one transaction, returns what it removed (of its kind, and of
// any kind that goes with it) and whether more may be left.
type step struct {
	kind  Kind
	batch func(ctx context.Context, q *db.Queries) (Removed, bool, error)
}

// Sweeper expires data in ordered steps, one round every interval, and
// keeps audit_events' monthly partitions (auditpartition.Maintain).
type Sweeper struct {
	pool     *pgxpool.Pool
	log      *slog.Logger
	batch    int32
	interval time.Duration
	policy   Policy
	steps    []step
	// OnSweep, when set, is told the outcome of every round for each kind
	// it swept, for metrics.
	OnSweep func(kind Kind, removed int64, err error)
	// OnAuditPartitions, when set, is told what every round's partition
	// maintenance changed, for metrics.
	OnAuditPartitions func(r auditpartition.Result, err error)
}

// NewSweeper returns a sweeper that deletes up to batch rows per statement
// and sweeps every interval, keeping what policy says.
func NewSweeper(pool *pgxpool.Pool, log *slog.Logger, batch int32, interval time.Duration, policy Policy) *Sweeper {
	s := &Sweeper{pool: pool, log: log, batch: batch, interval: interval, policy: policy}
	// Keys go first: a message an expired key points at can then go in the
	// same round. A kind whose period is zero is kept forever.
	s.steps = []step{{IdempotencyKeys, s.keys}}
	if policy.InterchangeWindow > 0 {
		s.steps = append(s.steps, step{Interchanges, s.interchanges})
	}
	if policy.Periods.Messages > 0 {
		s.steps = append(s.steps, step{Messages, s.messages})
	}
	if policy.Periods.BlockedCopies > 0 {
		s.steps = append(s.steps, step{BlockedCopies, s.blockedCopies})
	}
	if policy.Periods.DeliveryAttempts > 0 {
		s.steps = append(s.steps, step{DeliveryAttempts, s.deliveryAttempts})
	}
	return s
}

// Sweep runs every step, batch by batch until none is left, and returns
// the rows removed by kind. A step that fails does not stop the next ones;
// the errors are returned together. Each kind's outcome is recorded for the
// admin (retention_sweeps).
func (s *Sweeper) Sweep(ctx context.Context) (Removed, error) {
	removed := Removed{}
	failed := map[Kind]error{}
	for _, st := range s.steps {
		if _, ok := removed[st.kind]; !ok {
			removed[st.kind] = 0 // a step that removed nothing reports it
		}
		if err := s.run(ctx, st, removed); err != nil {
			failed[st.kind] = err
		}
	}
	if ctx.Err() != nil {
		// Stopping, not failing: the next start sweeps again.
		return removed, ctx.Err()
	}
	var errs []error
	for _, kind := range s.reported(removed) {
		err := failed[kind]
		if err != nil {
			errs = append(errs, err)
		}
		if s.OnSweep != nil {
			s.OnSweep(kind, removed[kind], err)
		}
		if err := s.record(ctx, kind, removed[kind], err); err != nil {
			errs = append(errs, err)
		}
	}
	return removed, errors.Join(errs...)
}

// record keeps the outcome of a kind's sweep for the admin's retention page.
func (s *Sweeper) record(ctx context.Context, kind Kind, removed int64, failure error) error {
	errText := ""
	if failure != nil {
		errText = failure.Error()
	}
	if err := db.On(s.pool).RetentionSweepRecord(ctx, db.RetentionSweepRecordParams{
		Kind: string(kind), Removed: removed, Error: errText,
	}); err != nil {
		return fmt.Errorf("record the %s sweep: %w", kind, err)
	}
	return nil
}

// reported lists the kinds a round reports: those of its steps, and those
// removed along with another kind (a message's blocked copies when blocked
// copies themselves never expire).
func (s *Sweeper) reported(removed Removed) []Kind {
	var out []Kind
	seen := map[Kind]bool{}
	for _, st := range s.steps {
		out, seen[st.kind] = append(out, st.kind), true
	}
	for _, kind := range kinds {
		if removed[kind] > 0 && !seen[kind] {
			out = append(out, kind)
		}
	}
	return out
}

// run repeats st's batch, each in a transaction of its own, while a batch
// comes back full. Between batches it rests as long as the batch took: a
// large backlog (the first sweep after expiry is switched on, say) then
// takes at most half of the time of the connection it runs on, and ingest
// keeps the rest of the database's CPU and disk. The everyday work, a day's
// worth of rows a day, is far below even that pace.
func (s *Sweeper) run(ctx context.Context, st step, removed Removed) error {
	for {
		began := time.Now()
		var got Removed
		var more bool
		err := db.WithTx(ctx, s.pool, func(q *db.Queries) error {
			if err := q.RetentionSweepPlanByIndex(ctx); err != nil {
				return err
			}
			var err error
			got, more, err = st.batch(ctx, q)
			return err
		})
		if err != nil {
			return fmt.Errorf("expire %s: %w", st.kind, err)
		}
		for kind, n := range got {
			removed[kind] += n
		}
		if !more {
			return nil
		}
		rest := time.NewTimer(time.Since(began))
		select {
		case <-ctx.Done():
			rest.Stop()
			return ctx.Err()
		case <-rest.C:
		}
	}
}

func (s *Sweeper) keys(ctx context.Context, q *db.Queries) (Removed, bool, error) {
	n, err := q.IdempotencyKeyDeleteExpired(ctx, s.batch)
	return Removed{IdempotencyKeys: n}, n == int64(s.batch), err
}

func (s *Sweeper) interchanges(ctx context.Context, q *db.Queries) (Removed, bool, error) {
	n, err := q.InterchangeDeleteExpired(ctx, db.InterchangeDeleteExpiredParams{
		WindowSeconds: s.policy.InterchangeWindow.Seconds(), BatchSize: s.batch,
	})
	return Removed{Interchanges: n}, n == int64(s.batch), err
}

// messages locks a batch of expired messages, then deletes their finished
// deliveries and then the messages with what hangs on them. A batch that
// locked rows but could delete none (each one's delivery requeued in
// between) ends the step rather than finding the same rows again.
func (s *Sweeper) messages(ctx context.Context, q *db.Queries) (Removed, bool, error) {
	ids, err := q.MessageExpireLock(ctx, db.MessageExpireLockParams{
		MessagesSeconds:    s.policy.Periods.Messages.Seconds(),
		KeyTtlSeconds:      s.policy.KeyTTL.Seconds(),
		DefaultWindowHours: messagetype.DefaultWindowHours,
		GraceSeconds:       Grace.Seconds(),
		BatchSize:          s.batch,
	})
	if err != nil || len(ids) == 0 {
		return nil, false, err
	}
	if _, err := q.MessageExpireDeliveries(ctx, ids); err != nil {
		return nil, false, err
	}
	row, err := q.MessageExpireDelete(ctx, ids)
	if err != nil {
		return nil, false, err
	}
	return Removed{Messages: row.Messages, BlockedCopies: row.BlockedCopies},
		len(ids) == int(s.batch) && row.Messages > 0, nil
}

func (s *Sweeper) blockedCopies(ctx context.Context, q *db.Queries) (Removed, bool, error) {
	n, err := q.BlockedCopyDeleteExpired(ctx, db.BlockedCopyDeleteExpiredParams{
		PeriodSeconds: s.policy.Periods.BlockedCopies.Seconds(), BatchSize: s.batch,
	})
	return Removed{BlockedCopies: n}, n == int64(s.batch), err
}

func (s *Sweeper) deliveryAttempts(ctx context.Context, q *db.Queries) (Removed, bool, error) {
	n, err := q.DeliveryAttemptDeleteExpired(ctx, db.DeliveryAttemptDeleteExpiredParams{
		PeriodSeconds: s.policy.Periods.DeliveryAttempts.Seconds(), BatchSize: s.batch,
	})
	return Removed{DeliveryAttempts: n}, n == int64(s.batch), err
}

// Run sweeps every interval until ctx ends. Failures are logged and the
// next round tries again: a missed sweep only delays the cleanup.
func (s *Sweeper) Run(ctx context.Context) {
	ticker := time.NewTicker(s.interval)
	defer ticker.Stop()
	for {
		removed, err := s.Sweep(ctx)
		var counts []any
		for _, kind := range s.reported(removed) {
			if removed[kind] > 0 {
				counts = append(counts, string(kind)+"_deleted", removed[kind])
			}
		}
		switch {
		case err != nil && ctx.Err() == nil:
			s.log.Warn("retention sweep failed", append([]any{"error", err}, counts...)...)
		case len(counts) > 0:
			s.log.Info("retention sweep", counts...)
		}
		s.maintainAuditEvents(ctx)
		select {
		case <-ctx.Done():
			return
		case <-ticker.C:
		}
	}
}

// maintainAuditEvents adds audit_events' months ahead and drops the expired
// ones. Like a sweep, a failure is logged and tried again next round: the
// months are added two ahead, so rounds may fail for weeks before an
// insert would find no partition.
func (s *Sweeper) maintainAuditEvents(ctx context.Context) {
	r, err := auditpartition.Maintain(ctx, s.pool, time.Now(), s.policy.Periods.AuditEvents)
	if ctx.Err() != nil {
		return
	}
	if s.OnAuditPartitions != nil {
		s.OnAuditPartitions(r, err)
	}
	// The server that held the maintenance lock records the round.
	if !r.Skipped {
		if rerr := s.record(ctx, AuditEvents, int64(len(r.Dropped)), err); rerr != nil {
			s.log.Warn("retention sweep failed", "error", rerr)
		}
	}
	switch {
	case err != nil:
		s.log.Warn("audit_events partition maintenance failed", "error", err,
			"partitions_created", r.Created, "partitions_dropped", r.Dropped)
	case len(r.Created) > 0 || len(r.Dropped) > 0:
		s.log.Info("audit_events partitions", "created", r.Created, "dropped", r.Dropped,
			"retention", config.FormatRetention(s.policy.Periods.AuditEvents))
	}
}
