// Package pgarray teaches pgx to encode the array parameters edihub sends
// most without reflection, and to send them without growing its write
// buffer again and again.
package pgarray

import (
	"context"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"
	"github.com/jackc/pgx/v5/pgxpool"
)

// EncodeDirectly makes every connection of the pool encode the two
// kinds of array parameter the storing statements send one item of per
// message, as pgx encodes []string or []int64: item by item from the slice
// itself.
//
// pgx knows neither kind. It encodes a [][]byte (payloads, hashes, the
// received bytes, the details of a blocked copy) through reflection, one
// boxed item at a time, and a []uuid.UUID (the integrations) worse: a
// uuid.UUID is a driver.Valuer, so each item is formatted as text, refused
// by the binary encoder and then parsed back before it is written.
// Encoded directly, the arrays cost a fraction of that (docs/performance.md,
// "Array parameters without reflection"). The bytes sent are the same;
// pgarray_test.go compares them.
//
// A pool without a tracer of its own also gets sendRoom, which grows pgx's
// write buffer once for a batch's large arrays before pgx writes them, and
// its connections keep their large buffers from one batch to the next
// (kept).
func EncodeDirectly(cfg *pgxpool.Config) {
	if cfg.ConnConfig.Tracer == nil {
		cfg.ConnConfig.Tracer = sendRoom{}
	}
	next := cfg.AfterConnect
	cfg.AfterConnect = func(ctx context.Context, conn *pgx.Conn) error {
		// Only sendRoom tells a connection's kept buffers when they are
		// free again; under another tracer they are not kept.
		var params *buffer
		if _, ok := conn.Config().Tracer.(sendRoom); ok {
			params = &keptOf(conn).params
		}
		register(conn.TypeMap(), params)
		if next != nil {
			return next(ctx, conn)
		}
		return nil
	}
}

// Register puts the direct encoders into m, ahead of pgx's own fallbacks,
// which pgx tries only for a Go type that no codec takes as it is. Their
// buffers are not kept: EncodeDirectly's connections keep theirs.
func Register(m *pgtype.Map) { register(m, nil) }

// register puts the direct encoders into m, growing their buffers in
// params when it is not nil. m is one connection's, as params is.
func register(m *pgtype.Map, params *buffer) {
	wrap := func(value any) (pgtype.WrappedEncodePlanNextSetter, any, bool) {
		switch value.(type) {
		case [][]byte:
			return &arrayPlan[[][]byte, []byte]{flat: bytesArray, size: bytesArraySize, params: params}, pgtype.FlatArray[[]byte](nil), true
		case []uuid.UUID:
			return &arrayPlan[[]uuid.UUID, [16]byte]{flat: uuidArray, size: uuidArraySize, params: params}, pgtype.FlatArray[[16]byte](nil), true
		}
		return nil, nil, false
	}
	m.TryWrapEncodePlanFuncs = append([]pgtype.TryWrapEncodePlanFunc{wrap}, m.TryWrapEncodePlanFuncs...)
}

// arrayPlan hands the slice on to pgx's array encoder as a FlatArray of
// items pgx encodes without reflection, in a buffer first grown to hold
// the whole array and the parameters after it (roomPerItem). pgx appends item after item to the buffer it encodes
// all of a statement's parameters into, which starts small for every
// statement, so a batch's payloads would otherwise grow it by doubling,
// copying everything written so far each time.
type arrayPlan[S any, E any] struct {
	next pgtype.EncodePlan
	flat func(S) pgtype.FlatArray[E]
	// size is about how many bytes the array takes, encoded in binary.
	size   func(S) int
	params *buffer // the connection's kept parameter buffer, nil for none
}

func (p *arrayPlan[S, E]) SetNext(next pgtype.EncodePlan) { p.next = next }

func (p *arrayPlan[S, E]) Encode(value any, buf []byte) ([]byte, error) {
	s := value.(S)
	items := p.flat(s)
	if n := p.size(s); cap(buf)-len(buf) < n {
		buf = p.params.grow(buf, n+len(items)*roomPerItem)
	}
	return p.next.Encode(items, buf)
}

// roomPerItem is the room a grown buffer keeps beyond the array, for each
// of its items, for the parameters that pgx appends after it in the same
// statement: each message's hashes, fingerprint, addresses, positions and
// key values, a few hundred bytes a message. Without that room the first
// of them copies the whole buffer, array and all, into one a quarter
// larger, and a second large array (a packet's received bytes after its
// views) is grown from that copy, so a large message is held two or three
// times over while it is sent.
const roomPerItem = 512

// arrayHeader is the size of a one-dimensional binary array's header.
const arrayHeader = 20

func bytesArray(s [][]byte) pgtype.FlatArray[[]byte] { return s }

// bytesArraySize counts each item's length word and a jsonb item's
// version byte beside its bytes.
func bytesArraySize(s [][]byte) int {
	n := arrayHeader
	for _, b := range s {
		n += 5 + len(b)
	}
	return n
}

func uuidArraySize(s []uuid.UUID) int { return arrayHeader + 20*len(s) }

// uuidArray copies the ids as the [16]byte pgx writes directly. A nil
// slice stays nil, which pgx sends as NULL, as it does a nil []uuid.UUID.
func uuidArray(s []uuid.UUID) pgtype.FlatArray[[16]byte] {
	if s == nil {
		return nil
	}
	ids := make(pgtype.FlatArray[[16]byte], len(s))
	for i, id := range s {
		ids[i] = id
	}
	return ids
}
