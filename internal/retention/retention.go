// Package retention removes data past its retention period: Idempotency-Keys
// older than IDEMPOTENCY_KEY_TTL. It deletes in small batches so that a
// large backlog never holds locks or a long transaction that ingest waits on.
package retention

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/lefia/edihub/internal/db"
)

// Sweeper deletes expired idempotency keys.
type Sweeper struct {
	pool     *pgxpool.Pool
	log      *slog.Logger
	batch    int32
	interval time.Duration
	// OnSweep, when set, is told the outcome of every round, for metrics.
	OnSweep func(deleted int64, err error)
}

// NewSweeper returns a sweeper that deletes up to batch keys per statement
// and looks for expired keys every interval.
func NewSweeper(pool *pgxpool.Pool, log *slog.Logger, batch int32, interval time.Duration) *Sweeper {
	return &Sweeper{pool: pool, log: log, batch: batch, interval: interval}
}

// Sweep deletes expired keys batch by batch until none is left, and returns
// how many it deleted. Each batch is its own short transaction.
func (s *Sweeper) Sweep(ctx context.Context) (int64, error) {
	q := db.On(s.pool)
	var total int64
	for {
		n, err := q.IdempotencyKeyDeleteExpired(ctx, s.batch)
		total += n
		if err != nil {
			return total, fmt.Errorf("delete expired idempotency keys: %w", err)
		}
		if n < int64(s.batch) {
			return total, nil
		}
	}
}

// Run sweeps every interval until ctx ends. Failures are logged and the
// next round tries again: a missed sweep only delays the cleanup.
func (s *Sweeper) Run(ctx context.Context) {
	ticker := time.NewTicker(s.interval)
	defer ticker.Stop()
	for {
		n, err := s.Sweep(ctx)
		if s.OnSweep != nil && ctx.Err() == nil {
			s.OnSweep(n, err)
		}
		switch {
		case err != nil && ctx.Err() == nil:
			s.log.Warn("retention sweep failed", "error", err, "deleted", n)
		case n > 0:
			s.log.Info("retention sweep", "idempotency_keys_deleted", n)
		}
		select {
		case <-ctx.Done():
			return
		case <-ticker.C:
		}
	}
}
