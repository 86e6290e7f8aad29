// Package standby decides where a read-only admin page reads: from the pool
// of ADMIN_DATABASE_URL, which may reach a standby, so that a heavy admin
// query never loads the primary, unless that standby has not yet replayed
// a write of the same admin, which the page must show. It measures how far
// the standby is behind at most once a second, whatever the number of
// pages, so that pages can say so.
package standby

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/lefia/edihub/internal/db"
)

// measureEvery is how long a measurement of the standby is reused.
const measureEvery = time.Second

// NoticeAfter is the lag from which pages say how far behind they are:
// below it, an admin cannot tell a standby from the primary.
const NoticeAfter = 5 * time.Second

// Reads holds the two pools and the last measurement of the read pool.
type Reads struct {
	primary, read *pgxpool.Pool
	log           *slog.Logger
	now           func() time.Time

	mu         sync.Mutex
	measuredAt time.Time
	position   position
	measureErr error
}

// position is what the read pool's server said of itself.
type position struct {
	standby  bool
	lag      time.Duration
	replayed int64
}

// New returns the Reads of primary and read; read may be primary itself,
// when ADMIN_DATABASE_URL is DATABASE_URL, and then every page reads the
// primary and nothing is measured.
func New(primary, read *pgxpool.Pool, log *slog.Logger) *Reads {
	return &Reads{primary: primary, read: read, log: log, now: time.Now}
}

// Split reports whether pages may read elsewhere than the primary, which
// is when writes must be remembered (Written).
func (r *Reads) Split() bool { return r.read != r.primary }

// Written is the position of the primary's WAL after a write that has
// committed: a page of the same admin reads the standby again once it has
// replayed that far.
func (r *Reads) Written(ctx context.Context) (int64, error) {
	return db.On(r.primary).WALWritten(ctx)
}

// Choice is where a page reads and how far behind that is.
type Choice struct {
	Pool *pgxpool.Pool
	// Lag is how far behind the standby is, when the page reads one and
	// it is at least NoticeAfter behind; zero otherwise.
	Lag time.Duration
}

// For chooses for a page of an admin whose last write is at WAL position
// written (0: none known): the read pool when it reaches the primary, or a
// standby that has replayed that write; else the primary. A standby that
// cannot be measured is not read.
func (r *Reads) For(ctx context.Context, written int64) Choice {
	if !r.Split() {
		return Choice{Pool: r.primary}
	}
	p, err := r.measure(ctx)
	switch {
	case err != nil:
		return Choice{Pool: r.primary}
	case !p.standby:
		return Choice{Pool: r.read}
	case p.replayed < written:
		return Choice{Pool: r.primary}
	case p.lag >= NoticeAfter:
		return Choice{Pool: r.read, Lag: p.lag}
	}
	return Choice{Pool: r.read}
}

// measure returns the read pool's position, asking its server at most once
// every measureEvery; concurrent pages wait for one question.
func (r *Reads) measure(ctx context.Context) (position, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if now := r.now(); now.Sub(r.measuredAt) >= measureEvery {
		row, err := db.On(r.read).StandbyPosition(ctx)
		r.measuredAt, r.measureErr = now, err
		r.position = position{standby: row.Standby, lag: time.Duration(row.LagSeconds * float64(time.Second)), replayed: row.Replayed}
		if err != nil {
			r.log.Warn("admin pages read the primary: the standby of ADMIN_DATABASE_URL cannot be measured", "error", err)
		}
	}
	return r.position, r.measureErr
}
