package pgarray

import (
	"slices"

	"github.com/jackc/pgx/v5"
)

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
	params []byte
	write  []byte
	// paramsFree says that params has not been handed out since the
	// connection's last batch started.
	paramsFree bool
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
	if k != nil {
		k.paramsFree = true
	}
}

// growParams returns buf with room for n more bytes, in the kept parameter
// buffer when it is free and large enough. A buffer grown here is kept in
// its place while it is no larger than maxKept.
func (k *kept) growParams(buf []byte, n int) []byte {
	if k != nil && k.paramsFree && cap(k.params) >= len(buf)+n {
		k.paramsFree = false
		return append(k.params[:0], buf...)
	}
	grown := make([]byte, len(buf), len(buf)+n)
	copy(grown, buf)
	if k != nil && cap(grown) <= maxKept {
		k.params, k.paramsFree = grown, false
	}
	return grown
}

// growWrite returns dst, pgx's write buffer, with room for n more bytes,
// in the kept write buffer when it is large enough and is not dst itself
// (pgx keeps a buffer it flushed when it held at most 1 KiB).
func (k *kept) growWrite(dst []byte, n int) []byte {
	if k != nil && cap(k.write) >= len(dst)+n && !sameArray(k.write, dst) {
		return append(k.write[:0], dst...)
	}
	grown := slices.Grow(dst, n)
	if k != nil && cap(grown) <= maxKept {
		k.write = grown
	}
	return grown
}

// sameArray says that a and b end in the same array, as two slices of
// one buffer from its start do.
func sameArray(a, b []byte) bool {
	return cap(a) > 0 && cap(b) > 0 && &a[:cap(a)][cap(a)-1] == &b[:cap(b)][cap(b)-1]
}
