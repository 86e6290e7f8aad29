package pgtest

import (
	"context"
	"sync/atomic"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// Sends counts the round trips a pool makes: each statement sent alone and
// each batch is one.
type Sends struct{ n atomic.Int64 }

// Count is the number of round trips so far.
func (s *Sends) Count() int64 { return s.n.Load() }

func (s *Sends) TraceQueryStart(ctx context.Context, _ *pgx.Conn, _ pgx.TraceQueryStartData) context.Context {
	s.n.Add(1)
	return ctx
}
func (*Sends) TraceQueryEnd(context.Context, *pgx.Conn, pgx.TraceQueryEndData) {}
func (s *Sends) TraceBatchStart(ctx context.Context, _ *pgx.Conn, _ pgx.TraceBatchStartData) context.Context {
	s.n.Add(1)
	return ctx
}
func (*Sends) TraceBatchQuery(context.Context, *pgx.Conn, pgx.TraceBatchQueryData) {}
func (*Sends) TraceBatchEnd(context.Context, *pgx.Conn, pgx.TraceBatchEndData)     {}

// CountedPool returns a pool of at most maxConns connections on a new,
// migrated database, and the count of its round trips. With one
// connection, a connection a transaction left behind is the next one used.
func CountedPool(t testing.TB, maxConns int32) (*pgxpool.Pool, *Sends) {
	t.Helper()
	sends := &Sends{}
	return poolWith(t, URL(t), func(cfg *pgxpool.Config) {
		cfg.MaxConns = maxConns
		cfg.ConnConfig.Tracer = sends
	}), sends
}
