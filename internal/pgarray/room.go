package pgarray

import (
	"context"
	"errors"

	"github.com/jackc/pgx/v5"
)

// minRoom is the smallest batch for which room is made: below it, pgx's
// write buffer (1 KiB between flushes) grows once or twice at most.
const minRoom = 16 << 10

// sendRoom makes room in pgx's write buffer, once, for a batch whose array
// parameters are large, before pgx writes the batch into it. pgx's
// Frontend gives its buffer back after every flush and starts again from
// 1 KiB, and a statement's Bind message is appended to it parameter by
// parameter, so a batch of 100 messages (a few hundred KiB to a MiB) grew
// it three or four times, copying what was written each time, and left
// the garbage collector the intermediate buffers (docs/performance.md,
// "pgx's write buffer made room for once"). It is a pgx.BatchTracer only
// for the moment it is called: after the batch has been queued and before
// it is encoded, on the connection that sends it. It traces nothing.
type sendRoom struct{}

// TraceBatchStart grows the connection's write buffer to hold the
// batch's byte-array parameters, with room for the other parameters of
// each message (roomPerItem), as the parameter buffer is grown (arrayPlan).
func (sendRoom) TraceBatchStart(ctx context.Context, conn *pgx.Conn, data pgx.TraceBatchStartData) context.Context {
	k := keptOf(conn)
	k.batchStarts()
	n, items := 0, 0
	for _, q := range data.Batch.QueuedQueries {
		for _, a := range q.Arguments {
			if s, ok := a.([][]byte); ok {
				n += bytesArraySize(s)
				items = max(items, len(s))
			}
		}
	}
	if n += items * roomPerItem; n >= minRoom {
		conn.PgConn().Frontend().Send(room{n: n, write: &k.write})
	}
	return ctx
}

func (sendRoom) TraceBatchQuery(context.Context, *pgx.Conn, pgx.TraceBatchQueryData) {}
func (sendRoom) TraceBatchEnd(context.Context, *pgx.Conn, pgx.TraceBatchEndData)     {}

// TraceQueryStart and TraceQueryEnd make sendRoom a pgx.QueryTracer, the
// type pgx takes a tracer as; single queries are left as they are.
func (sendRoom) TraceQueryStart(ctx context.Context, _ *pgx.Conn, _ pgx.TraceQueryStartData) context.Context {
	return ctx
}
func (sendRoom) TraceQueryEnd(context.Context, *pgx.Conn, pgx.TraceQueryEndData) {}

// room is a frontend message of no bytes that grows the buffer it is
// appended to by n bytes, into the connection's kept write buffer where it
// can: sent, it writes nothing on the wire.
type room struct {
	n     int
	write *buffer
}

func (room) Frontend() {}

func (r room) Encode(dst []byte) ([]byte, error) { return r.write.grow(dst, r.n), nil }

func (room) Decode([]byte) error { return errors.New("pgarray: room is never received") }
