package ingest

import (
	"context"
	"fmt"
	"runtime/debug"
	"sync"
	"time"

	"github.com/lefia/edihub/internal/db"
)

// Group commit: single messages decided by their fingerprint that arrive
// while a transaction is committing wait for it and then share the next
// one. A request costs PostgreSQL about as much for its BEGIN, COMMIT (and
// the WAL flush behind it) and round trips as for its own statement; a
// group of twenty pays those once, the way a batch does.
//
// What stays as it was, and why:
//   - A 2xx still means committed: a member is answered only after the
//     group's COMMIT has returned.
//   - A failure is nobody else's: when the shared transaction fails for any
//     reason (a statement, a foreign key, the commit), no member is given
//     that error; each one is decided again alone, on the path a single
//     request took before group commit, so that a bad member fails by
//     itself and the others are stored. Only messages with a fingerprint
//     join a group, so deciding one again after a commit whose outcome is
//     unknown finds the stored message and answers a duplicate instead of
//     storing it twice.
//   - The group's transaction runs on a context of its own, so that a
//     member whose client left cannot cancel the others' messages; it
//     lasts as long as the member who waits longest (groupTimeout when one
//     has no deadline). A member who left before its group started is
//     dropped from it.
//   - Members are decided in arrival order by receiveAllByFingerprint, with
//     the decisions one after the other would make, so two copies in one
//     group are one stored message and one blocked duplicate with its audit
//     event. Every member's row of the statement carries its own tenant and
//     environment.
//   - Groups running side by side take their claims' advisory locks in one
//     sorted order first (claimLocks, as batches do), so they wait for each
//     other rather than deadlock.

// Bounds of one group: as many messages as the largest batch a bench
// sends, and no more payload than one statement carries (statementBytes),
// so that a group is one statement and holds no more memory than a batch.
// A member larger than that is a group of its own.
const (
	maxGroupMessages = 100
	maxGroupBytes    = statementBytes
)

// groupTimeout bounds a group's transaction when one of its members has no
// deadline of its own.
const groupTimeout = 30 * time.Second

// committer forms the groups. It keeps no goroutine of its own while idle:
// a request that finds a lane free leads a group at once (a lone request
// goes straight through, with no wait), and one that finds every lane busy
// queues for the next group. A lane whose group has committed while others
// queued goes on leading, in a goroutine, until the queue is empty.
type committer struct {
	s *Service
	// lanes is how many groups may be in flight at once: one lane would
	// serialise every single message behind one transaction, while as many
	// lanes as clients would leave every group a group of one.
	lanes   int
	observe func(size int, failed bool)

	mu      sync.Mutex
	waiting []*member // in arrival order
	leading int       // lanes whose leader is forming or committing a group
}

// member is one request in a group.
type member struct {
	ctx context.Context
	m   message
	// done receives the answer; it has room for it, so that whoever
	// answers never waits for the member to read it.
	done chan memberAnswer
}

// memberAnswer is what a group did with a member: decided it (res, err),
// or failed as a whole, leaving the member to be decided alone.
type memberAnswer struct {
	res   Result
	err   error
	alone bool
}

// receive decides m in a group, or alone when its group failed.
func (c *committer) receive(ctx context.Context, m message) (Result, error) {
	me := &member{ctx: ctx, m: m, done: make(chan memberAnswer, 1)}
	c.mu.Lock()
	c.waiting = append(c.waiting, me)
	if c.leading < c.lanes {
		c.leading++
		group := c.take()
		c.mu.Unlock()
		c.commit(group)
		c.handOn()
	} else {
		c.mu.Unlock()
	}
	a := <-me.done
	if a.alone {
		return c.s.receiveAlone(ctx, m)
	}
	return a.res, a.err
}

// handOn keeps a lane that has just committed its group leading in a
// goroutine while requests are queued, and frees it once none are, so that
// the request that led it can be answered now.
func (c *committer) handOn() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.waiting) == 0 {
		c.leading--
		return
	}
	go c.lead()
}

// lead commits the queued requests group after group until none are left.
func (c *committer) lead() {
	for {
		c.mu.Lock()
		if len(c.waiting) == 0 {
			c.leading--
			c.mu.Unlock()
			return
		}
		group := c.take()
		c.mu.Unlock()
		c.commit(group)
	}
}

// take removes the next group from the queue, in arrival order, within
// maxGroupMessages and maxGroupBytes; the first waiting request always
// joins, however large. A request whose client has left is answered with
// that and left out. The caller holds c.mu.
func (c *committer) take() []*member {
	var group []*member
	n, size := 0, 0
	for _, w := range c.waiting {
		if len(group) > 0 && size+w.m.size() > maxGroupBytes || len(group) == maxGroupMessages {
			break
		}
		n++
		if err := w.ctx.Err(); err != nil {
			w.done <- memberAnswer{err: err}
			continue
		}
		group = append(group, w)
		size += w.m.size()
	}
	clear(c.waiting[:n])
	c.waiting = c.waiting[n:]
	if len(c.waiting) == 0 {
		c.waiting = nil // lets the array, and the messages it held, go
	}
	return group
}

// commit decides a group in one transaction and answers each member after
// the commit. A group of one is decided exactly as a request alone, on its
// own context.
func (c *committer) commit(group []*member) {
	switch len(group) {
	case 0:
		return
	case 1:
		var res Result
		_, err := unpanicked(func() (_ []Result, err error) {
			res, err = c.s.receiveAlone(group[0].ctx, group[0].m)
			return nil, err
		})
		group[0].done <- memberAnswer{res: res, err: err}
		c.observe(1, false)
		return
	}
	ctx, cancel := groupContext(group)
	defer cancel()
	ms := make([]message, len(group))
	for i, w := range group {
		ms[i] = w.m
	}
	results, err := unpanicked(func() ([]Result, error) {
		return c.s.storeTx(ctx, func(q *db.Queries) ([]Result, error) {
			if err := q.MessageClaimLocks(ctx, claimLocks(ms)); err != nil {
				return nil, fmt.Errorf("lock the group's claims: %w", err)
			}
			return receiveAllByFingerprint(ctx, q, ms)
		})
	})
	c.observe(len(group), err != nil)
	for i, w := range group {
		if err != nil {
			w.done <- memberAnswer{alone: true}
		} else {
			w.done <- memberAnswer{res: results[i]}
		}
	}
}

// unpanicked runs decide and turns a panic in it into an error. A lane may
// lead on a goroutine of its own (lead), where a panic would end the
// process, and the members it has taken would never be answered; as an
// error, a failed group's members are decided alone, like after any other
// failure, and the lane is freed. A panic is a bug, so the error keeps the
// stack for the log.
func unpanicked(decide func() ([]Result, error)) (results []Result, err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("group commit: panic: %v\n%s", p, debug.Stack())
		}
	}()
	return decide()
}

// groupContext is the context of a group's transaction: detached from
// every member, so that no member's departure cancels the others', and
// ending with the last member's deadline (groupTimeout from now when a
// member has none), after which nobody waits for the answer.
func groupContext(group []*member) (context.Context, context.CancelFunc) {
	var last time.Time
	for _, w := range group {
		d, ok := w.ctx.Deadline()
		if !ok {
			d = time.Now().Add(groupTimeout)
		}
		if d.After(last) {
			last = d
		}
	}
	return context.WithDeadline(context.Background(), last)
}
