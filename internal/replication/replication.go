// Package replication tells whether the primary that edihub writes to has a
// synchronous standby now, that is whether an acknowledged commit is on two
// machines. pg_auto_failover lets a primary whose standby is lost go on
// alone (docs/operations.md, "High availability"); edihub then says so in
// /readyz, in a metric, and, with REQUIRE_SYNCHRONOUS_STANDBY, refuses to
// acknowledge rather than acknowledge on one machine.
package replication

import (
	"context"
	"log/slog"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/lefia/edihub/internal/db"
)

// State is what the primary says of its standbys.
type State struct {
	// Configured is true when the primary has standbys to wait for:
	// synchronous_standby_names is set, or a standby keeps a physical
	// replication slot on it. pg_auto_failover clears the setting while
	// the primary goes on alone but keeps the lost standby's slot, so the
	// slot tells a formation that lost its standby from a single server.
	Configured bool
	// Synchronous counts the standbys that confirm commits now.
	Synchronous int
}

// Protected reports whether a commit acknowledged now is on two machines.
func (s State) Protected() bool { return s.Configured && s.Synchronous > 0 }

// Alone reports whether the primary has standbys to wait for and none
// confirms commits: it goes on alone, and what it commits is on one
// machine. A single server is not alone in this sense: it has no standby
// by design.
func (s State) Alone() bool { return s.Configured && s.Synchronous == 0 }

// Describe is the state in the words /readyz answers with.
func (s State) Describe() string {
	switch {
	case s.Protected():
		return "synchronous standby"
	case s.Configured:
		return "no synchronous standby: acknowledged messages are on one machine"
	default:
		return "single server"
	}
}

// Read asks the database that q reads: the primary that edihub writes
// to, through its pool or a transaction on it.
func Read(ctx context.Context, q *db.Queries) (State, error) {
	r, err := q.ReplicationState(ctx)
	return State{Configured: r.Configured, Synchronous: int(r.Synchronous)}, err
}

// Guard keeps the latest state, read every interval by Run, so that an
// ingest request asks a variable, not the database. Until the first read
// succeeds nothing is known: the primary is not taken to be alone, but
// its commits are to be confirmed.
type Guard struct {
	state atomic.Pointer[State]
	// OnRead, when set, is given every state read (for the metric).
	OnRead func(State)
}

// Alone reports whether the last state read was alone (State.Alone).
func (g *Guard) Alone() bool {
	s := g.state.Load()
	return s != nil && s.Alone()
}

// Confirming reports whether commits are to be confirmed by a standby
// (ingest.WithConfirmedCommits): unless the last state read was that of a
// single server, which has no standby to confirm them.
func (g *Guard) Confirming() bool {
	s := g.state.Load()
	return s == nil || s.Configured
}

// Run reads the state every interval until ctx ends. A failed read keeps
// the last state: the database is away, and requests fail on their own.
func (g *Guard) Run(ctx context.Context, pool *pgxpool.Pool, interval time.Duration, log *slog.Logger) {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		readCtx, cancel := context.WithTimeout(ctx, interval)
		s, err := Read(readCtx, db.On(pool))
		cancel()
		if err == nil {
			was := g.state.Swap(&s)
			if was == nil && s.Configured || was != nil && was.Describe() != s.Describe() {
				log.Warn("database replication changed", "state", s.Describe())
			}
			if g.OnRead != nil {
				g.OnRead(s)
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}
