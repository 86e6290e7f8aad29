// Package refused counts the ingest requests refused with 400, 401, 403,
// 413, 415 or 422 per API key and per integration, for the alert rule
// intake.refusing (a sender that keeps sending what edihub refuses is
// misconfigured). A refused request only adds one to a count in memory;
// Run adds the counts to intake_refusals, one row per subject and minute,
// every few seconds, so the hot path never writes to the database. Only
// authenticated API keys and known integrations are counted, so a flood of
// made-up keys adds nothing, and the entries are bounded besides.
package refused

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"sync"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/lefia/edihub/internal/db"
)

// The kinds of subject a refusal is counted for.
const (
	KindAPIKey      = "api_key"
	KindIntegration = "integration"
)

// Subject is who was refused: an API key (its id) or an integration (its
// id), of a tenant.
type Subject struct {
	Kind     string
	Key      string
	TenantID int64
}

// Counted reports whether an answer of status counts as a refusal: the
// answers that tell a sender its requests are wrong, not that edihub is
// busy or down.
func Counted(status int) bool {
	switch status {
	case http.StatusBadRequest, http.StatusUnauthorized, http.StatusForbidden, http.StatusRequestEntityTooLarge,
		http.StatusUnsupportedMediaType, http.StatusUnprocessableEntity:
		return true
	}
	return false
}

// maxEntries bounds the counts held between flushes: a subject and minute
// each, about 100 bytes. Subjects are configured keys and integrations, so
// more than this in a few seconds means the database has been unreachable
// for long; the newest counts are then dropped.
const maxEntries = 10_000

type entry struct {
	Subject
	minute time.Time
}

// Counter holds the refusals counted since the last flush.
type Counter struct {
	mu     sync.Mutex
	counts map[entry]int32
	now    func() time.Time
}

// New returns an empty counter.
func New() *Counter { return &Counter{counts: map[entry]int32{}, now: time.Now} }

// Count counts one refusal of s now.
func (c *Counter) Count(s Subject) {
	e := entry{Subject: s, minute: c.now().UTC().Truncate(time.Minute)}
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.counts[e]; ok || len(c.counts) < maxEntries {
		c.counts[e]++
	}
}

// Flush adds the counts to intake_refusals in one transaction. Counts that
// could not be written are kept for the next flush.
func (c *Counter) Flush(ctx context.Context, pool *pgxpool.Pool) error {
	c.mu.Lock()
	counts := c.counts
	c.counts = map[entry]int32{}
	c.mu.Unlock()
	if len(counts) == 0 {
		return nil
	}
	err := db.WithTx(ctx, pool, func(q *db.Queries) error {
		for e, n := range counts {
			if err := q.IntakeRefusalAdd(ctx, db.IntakeRefusalAddParams{
				SubjectKind: e.Kind, SubjectKey: e.Key, Minute: e.minute, TenantID: e.TenantID, Refusals: n,
			}); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		c.mu.Lock()
		for e, n := range counts {
			if _, ok := c.counts[e]; ok || len(c.counts) < maxEntries {
				c.counts[e] += n
			}
		}
		c.mu.Unlock()
		return fmt.Errorf("add refusal counts: %w", err)
	}
	return nil
}

// FlushInterval is how often Run adds the counts to the database: a small
// part of the 15 minutes intake.refusing looks at.
const FlushInterval = 5 * time.Second

// Run flushes every FlushInterval until ctx ends, then once more, so that
// a server stopping loses no count.
func (c *Counter) Run(ctx context.Context, pool *pgxpool.Pool, log *slog.Logger) {
	ticker := time.NewTicker(FlushInterval)
	defer ticker.Stop()
	for {
		select {
		case <-ctx.Done():
			last, cancel := context.WithTimeout(context.WithoutCancel(ctx), FlushInterval)
			defer cancel()
			if err := c.Flush(last, pool); err != nil {
				log.Warn("refusal counts lost at shutdown", "error", err)
			}
			return
		case <-ticker.C:
			if err := c.Flush(ctx, pool); err != nil && ctx.Err() == nil {
				log.Warn("refusal counts not written; kept for the next flush", "error", err)
			}
		}
	}
}
