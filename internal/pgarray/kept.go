package pgarray

import "github.com/jackc/pgx/v5"

// kept is a connection's two large buffers, kept from one batch to the
// next: the parameter buffer arrayPlan grew last and the write buffer
// sendRoom grew last. pgx lets go of both after every statement (its
// parameter buffer) and every flush (its write buffer) and starts again
// from a few hundred bytes, so that a connection holds nothing large
// between statements. For a batch of 100 messages that made two fresh
// buffers of a few hundred KiB each a batch, a third of what edihub
// allocated for interchanges of 100 (docs/performance.md, "A connection's
// buffers kept").
//
// A buffer is handed out again only when nothing can still be reading it.
// pgx copies a statement's parameters into its write buffer before it
// builds the next statement's, and writes and lets go of its write buffer
// before the connection's next batch; a connection runs one thing at a
// time. So when a batch starts (sendRoom.TraceBatchStart), whatever the
// connection sent before is done with both.
type kept struct {
	params, write buffer
}

// buffer is one of a connection's kept buffers.
type buffer struct {
	b []byte
	// free says that b has not been handed out since the connection's
	// last batch started.
	free bool
}

// keptKey is where a connection keeps its kept, in its pgconn's CustomData.
const keptKey = "pgarray.kept"

// maxKept bounds each buffer a connection keeps: those of a request of 100
// messages of 2 KiB (some 250 to 320 KiB) fit, and a pool of 16
// connections, edihub serve's on two cores, holds at most 16 MiB of them
// between batches, within the heap the collector's limit leaves requests
// (docs/performance.md, "A budget that leaves the collector room"). A
// larger buffer (a large message, a packet's run of a MiB) is left to the
// collector as before.
const maxKept = 512 << 10

// keptOf is conn's kept, made when the connection is new.
func keptOf(conn *pgx.Conn) *kept {
	data := conn.PgConn().CustomData()
	k, ok := data[keptKey].(*kept)
	if !ok {
		k = &kept{}
		data[keptKey] = k
	}
	return k
}

// batchStarts tells k that the connection's earlier statements are done
// with its buffers.
func (k *kept) batchStarts() {
	k.params.free, k.write.free = true, true
}

// grow returns buf with room for n more bytes: in the kept buffer when it
// is free and large enough, else in buf when it has the room, else in a
// new one; what it returns is kept in its place while it is no larger
// than maxKept. buf may be the kept buffer itself (pgx keeps a write
// buffer it flushed when it held at most 1 KiB); it is then copied onto
// itself. A nil b keeps nothing.
func (b *buffer) grow(buf []byte, n int) []byte {
	if b != nil && b.free && cap(b.b) >= len(buf)+n {
		b.free = false
		return append(b.b[:0], buf...)
	}
	grown := buf
	if cap(buf)-len(buf) < n {
		// Of the size asked for: slices.Grow follows append's rule,
		// which may take up to twice as much (pgarray_test.go's
		// allocation tests).
		grown = make([]byte, len(buf), len(buf)+n)
		copy(grown, buf)
	}
	if b != nil && cap(grown) <= maxKept {
		b.b, b.free = grown, false
	}
	return grown
}
