package server

import (
	"cmp"
	"context"
	"errors"
	"io"
	"math/bits"
	"slices"
	"sync"

	"github.com/labstack/echo/v4"

	"github.com/lefia/edihub/internal/metrics"
)

// bodyBudgetKey is the Echo context key of the request's share of the
// body budget, returned when the request has been answered.
const bodyBudgetKey = "edihub.body_budget"

// bodyBudget holds back API requests whose bodies would take the bytes in
// process past MAX_BODY_BYTES_IN_PROCESS. A body is held in memory several
// times over while it is parsed, hashed and sent to PostgreSQL, and
// the work is CPU-bound: sixteen 5 MiB posts read at once only interleave
// and multiply the peak, while a body that waits unread costs the server
// nothing (it stays in the sender's and the kernel's buffers).
//
// A request takes its share as its body's bytes arrive, not as its
// Content-Length announces them: a sender that announces 10 MiB, or sends
// chunks of unknown length, and then sends nothing holds nothing, so that
// it cannot make other tenants' requests wait. Shares that grow step by
// step could each hold part of the budget and all wait for more, none
// ever complete; so a step is granted only when, after it, every share
// could still be completed one after another, each from the bytes free
// and those the ones before it returned (the banker's algorithm, for a
// single resource). The requests then always move on.
type bodyBudget struct {
	mu      sync.Mutex
	limit   int64
	free    int64
	shares  map[*bodyShare]struct{}
	waiting []*bodyShare // in the order they asked
	metrics *metrics.Metrics
}

// bodyShare is one request's part of the budget.
type bodyShare struct {
	held int64
	// need is the most the share may come to hold: the body's announced
	// length, MAX_BODY_BYTES while its length is unknown, and what it holds
	// once read.
	need int64
	// want and granted are set while the share waits to grow.
	want    int64
	granted chan struct{}
}

// remaining is what the share may still ask for.
func (s *bodyShare) remaining() int64 { return max(0, s.need-s.held) }

func newBodyBudget(limit int64, m *metrics.Metrics) *bodyBudget {
	return &bodyBudget{limit: limit, free: limit, shares: map[*bodyShare]struct{}{}, metrics: m}
}

// hold gives the group's requests a place for their share of the budget,
// and returns the share when the request has been answered.
func (b *bodyBudget) hold(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		s := &bodyShare{}
		b.mu.Lock()
		b.shares[s] = struct{}{}
		b.mu.Unlock()
		c.Set(bodyBudgetKey, s)
		defer b.leave(s)
		return next(c)
	}
}

// leave returns everything s holds and wakes the shares that now fit.
func (b *bodyBudget) leave(s *bodyShare) {
	b.mu.Lock()
	defer b.mu.Unlock()
	delete(b.shares, s)
	if s.held == 0 {
		return
	}
	b.free += s.held
	b.metrics.BodyBytesInProcess.Sub(float64(s.held))
	s.held = 0
	b.wake()
}

// wake grants the waiting shares that fit now, in the order they asked;
// one that does not fit does not hold back those after it. It runs with
// b.mu held, whenever bytes were returned or a share stopped growing.
func (b *bodyBudget) wake() {
	kept := b.waiting[:0]
	for _, w := range b.waiting {
		if b.grantable(w, w.want) {
			b.grant(w, w.want)
			close(w.granted)
			continue
		}
		kept = append(kept, w)
	}
	clear(b.waiting[len(kept):])
	b.waiting = kept
}

// grantable reports whether s may take n more bytes now: they are free,
// and the budget stays safe after it.
func (b *bodyBudget) grantable(s *bodyShare, n int64) bool {
	if n > b.free {
		return false
	}
	s.held += n
	ok := b.safe(b.free - n)
	s.held -= n
	return ok
}

// safe reports whether every share could be completed, one after another
// in the order of what each still may ask for, from free and what the
// ones completed before it return. A share that holds nothing is left
// out: it returns nothing, and once every other share has returned its
// bytes the whole budget is free, which covers any share's need.
func (b *bodyBudget) safe(free int64) bool {
	holding := make([]*bodyShare, 0, len(b.shares))
	for s := range b.shares {
		if s.held > 0 {
			holding = append(holding, s)
		}
	}
	slices.SortFunc(holding, func(x, y *bodyShare) int { return cmp.Compare(x.remaining(), y.remaining()) })
	for _, s := range holding {
		if s.remaining() > free {
			return false
		}
		free += s.held
	}
	return true
}

func (b *bodyBudget) grant(s *bodyShare, n int64) {
	b.free -= n
	s.held += n
	b.metrics.BodyBytesInProcess.Add(float64(n))
}

// grow waits, within ctx, until s may take n more bytes (never more than
// the whole budget), and takes them.
func (b *bodyBudget) grow(ctx context.Context, s *bodyShare, n int64) error {
	b.mu.Lock()
	n = min(n, b.limit-s.held)
	if b.grantable(s, n) {
		b.grant(s, n)
		b.mu.Unlock()
		return nil
	}
	s.want, s.granted = n, make(chan struct{})
	b.waiting = append(b.waiting, s)
	b.mu.Unlock()
	b.metrics.BodiesWaiting.Inc()
	defer b.metrics.BodiesWaiting.Dec()
	select {
	case <-s.granted:
		return nil
	case <-ctx.Done():
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	select {
	case <-s.granted:
		return nil // granted while the context ended: the request goes on
	default:
	}
	for i, w := range b.waiting {
		if w == s {
			b.waiting = append(b.waiting[:i], b.waiting[i+1:]...)
			break
		}
	}
	return ctx.Err()
}

// errLongerThanAnnounced is a body that goes on past the length read was
// told; the reader given to read normally ends it first.
var errLongerThanAnnounced = errors.New("the body is longer than announced")

// firstStep is the share a body takes when its first byte arrives; each
// further step doubles what it holds, so a share is never more than twice
// the bytes that arrived (or firstStep).
const firstStep = 512

// read reads r, a body of at most need bytes (its announced length, or the
// most a body may be), into a buffer that grows as bytes arrive, each
// growth taken from the request's share first, cost times its bytes (what
// working on the body costs beside a JSON body's bytes). Nothing is taken
// before the first byte. Outside a group that holds shares it reads
// without limit.
func (b *bodyBudget) read(c echo.Context, r io.Reader, need, cost int64) ([]byte, error) {
	s, ok := c.Get(bodyBudgetKey).(*bodyShare)
	if !ok {
		return io.ReadAll(r)
	}
	b.mu.Lock()
	s.need = min(need*cost, b.limit)
	b.mu.Unlock()
	var buf []byte
	var probe [1]byte
	for {
		if len(buf) == cap(buf) {
			// Full, or not begun: wait for one more byte before taking room
			// for more, so that a sender that stops holds no more.
			if _, err := io.ReadFull(r, probe[:]); err != nil {
				return b.finished(s, buf, err)
			}
			if int64(len(buf)) >= need {
				return nil, errLongerThanAnnounced
			}
			next := min(need, max(2*int64(cap(buf)), firstStep))
			if err := b.grow(c.Request().Context(), s, (next-int64(cap(buf)))*cost); err != nil {
				return nil, err
			}
			grown := append(append(stepBuffer(next), buf...), probe[0])
			recycleStep(buf)
			buf = grown
		}
		n, err := r.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+n]
		if err != nil {
			return b.finished(s, buf, err)
		}
	}
}

// stepBuffers keeps the buffers that bodies outgrew, a pool for each
// step's size (firstStep doubled k times, up to maxPooledStep), for the
// next body that reaches the step. Read in doubling steps, a body would
// otherwise leave the collector about as many bytes again as it holds (a
// batch of 100 messages: 528 KB allocated for 225 KB). The buffer a body
// ends in is the body, and is never put back; a buffer is put back only
// once what it held has been copied into the next.
var stepBuffers [maxPooledStep + 1]sync.Pool

// maxPooledStep is the largest step pooled: firstStep << 14 is 8 MiB.
const maxPooledStep = 14

// stepClass is the pool of a step of size bytes, if it has one.
func stepClass(size int64) (int, bool) {
	n := size / firstStep
	if size%firstStep != 0 || n == 0 || n&(n-1) != 0 {
		return 0, false
	}
	k := bits.TrailingZeros64(uint64(n))
	return k, k <= maxPooledStep
}

// stepBuffer is an empty buffer of size bytes' capacity, from its pool
// when one is there.
func stepBuffer(size int64) []byte {
	if k, ok := stepClass(size); ok {
		if p, _ := stepBuffers[k].Get().(*[]byte); p != nil {
			return (*p)[:0]
		}
	}
	return make([]byte, 0, size)
}

// recycleStep puts back a buffer a body has outgrown.
func recycleStep(buf []byte) {
	if k, ok := stepClass(int64(cap(buf))); ok {
		stepBuffers[k].Put(&buf)
	}
}

// finished ends a read that got err: the body is complete at io.EOF, and
// its share will not grow any more.
func (b *bodyBudget) finished(s *bodyShare, buf []byte, err error) ([]byte, error) {
	if err != io.EOF {
		return nil, err
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	s.need = s.held
	b.wake()
	return buf, nil
}
