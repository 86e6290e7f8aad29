package ingest

import (
	"context"
	"errors"
	"fmt"
	"runtime/debug"
	"sync"
	"time"

	"github.com/lefia/edihub/internal/auditevent"
	"github.com/lefia/edihub/internal/db"
)

// Group commit: single requests that arrive while a transaction of their
// kind commits share the next one. The package documentation (doc.go)
// says what it changes and what it keeps.

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

// committers route each single request to the committer of its kind:
// replays of Idempotency-Keys, retransmissions (messages whose bytes the
// tenant sent lately with their fingerprints, message.seen), and the
// messages to store. A group of replays or of retransmissions stores
// nothing and is one round trip, its BEGIN and COMMIT in it
// (db.OwnTransactions): with one lane, such groups grow to about twice the
// size they reach with two and cost PostgreSQL and edihub a fifth less a
// message, which more than pays for the lane they wait for. A group of
// messages to store holds its lane for two round trips and its COMMIT; one
// lane is the default there too (DefaultGroupLanes), and GROUP_COMMIT may
// give it more (docs/performance.md, "A committer for each kind of request"
// and "Lanes, by measurement"). Each kind also queues apart, so that a
// replay never waits behind a group of new messages.
type committers struct {
	stores, retransmissions, replays *committer
}

// quickLanes is how many groups of replays, and of retransmissions, may be
// in flight at once.
const quickLanes = 1

func newCommitters(s *Service, storeLanes int, observe func(size int, failed bool)) *committers {
	return &committers{
		stores:          &committer{s: s, lanes: storeLanes, observe: observe},
		retransmissions: &committer{s: s, lanes: quickLanes, observe: observe},
		replays:         &committer{s: s, lanes: quickLanes, observe: observe, replays: true},
	}
}

// of is the committer of m's kind.
func (g *committers) of(m message) *committer {
	switch {
	case m.IdempotencyKey != "":
		return g.replays
	case m.seen:
		return g.retransmissions
	}
	return g.stores
}

// committer forms the groups of one kind. It keeps no goroutine of its
// own while idle: a request that finds a lane free leads a group at once
// (a lone request goes straight through, with no wait), and one that finds
// every lane busy queues for the next group. A lane whose group has
// committed while others queued goes on leading, in a goroutine, until the
// queue is empty.
type committer struct {
	s *Service
	// lanes is how many groups may be in flight at once: with one, every
	// request that arrives while a group commits waits for it and joins the
	// next, which grows as it waits; as many lanes as clients would leave
	// every group a group of one.
	lanes   int
	observe func(size int, failed bool)
	// replays says that every member carries an Idempotency-Key, which the
	// group replays; else every member is decided by its fingerprint.
	replays bool

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
// found its Idempotency-Key not taken (claim), leaving the member to claim
// the key on its own, or failed as a whole (alone), leaving the member to
// be decided alone.
type memberAnswer struct {
	res   Result
	err   error
	claim bool
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
	switch {
	case a.alone:
		return c.s.decideAlone(ctx, m)
	case a.claim:
		return c.s.storeWithKey(ctx, m, false)
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
// the commit. A group of one is decided as a request alone, on its own
// context (alone).
func (c *committer) commit(group []*member) {
	switch len(group) {
	case 0:
		return
	case 1:
		var a memberAnswer
		if _, err := unpanicked(func() ([]Result, error) {
			a = c.alone(group[0])
			return nil, nil
		}); err != nil {
			a = memberAnswer{err: err}
		}
		group[0].done <- a
		c.observe(1, false)
		return
	}
	ctx, cancel := groupContext(group)
	defer cancel()
	ms := make([]message, len(group))
	for i, w := range group {
		ms[i] = w.m
	}
	var answers []memberAnswer
	_, err := unpanicked(func() ([]Result, error) {
		var err error
		if c.replays {
			// Replays store nothing and write no deliveries: their
			// statement is a transaction of its own, BEGIN and COMMIT
			// in its one round trip.
			answers, err = replayKeys(ctx, c.s.ownTx, ms)
			return nil, err
		}
		var results []Result
		results, err = c.s.receiveAllByFingerprintTx(ctx, claimLocks(ms), ms)
		answers = make([]memberAnswer, len(results))
		for i, res := range results {
			answers[i] = memberAnswer{res: res}
		}
		return nil, err
	})
	c.observe(len(group), err != nil)
	for i, w := range group {
		switch {
		case errors.Is(err, db.ErrCommitUnconfirmed):
			// Committed, on the primary alone: deciding the members again
			// would find what this stored, and commit unconfirmed again.
			w.done <- memberAnswer{err: err}
		case err != nil:
			w.done <- memberAnswer{alone: true}
		default:
			w.done <- answers[i]
		}
	}
}

// alone decides the member of a group of one as a request alone: a
// message by its fingerprint in a transaction of its own, and a message
// with an Idempotency-Key by replaying the key, in a transaction of the
// replay alone (Service.ownTx). A key that is not taken is left to the
// member to claim, as in a larger group, so that a lane never waits for
// another request's claim of a key.
func (c *committer) alone(w *member) memberAnswer {
	if !c.replays {
		res, err := c.s.receiveAlone(w.ctx, w.m)
		return memberAnswer{res: res, err: err}
	}
	res, replayed, err := replay(w.ctx, c.s.ownTx, w.m.keyID(), w.m.requestHash, []message{w.m})
	return memberAnswer{res: res, err: err, claim: err == nil && !replayed}
}

// replayKeys replays the Idempotency-Key of each of ms, single messages,
// all with one statement (IdempotencyKeyReplayAll), which answers and
// records each as IdempotencyKeyReplay, the statement of a lone replay,
// would. A replay claims nothing, so it takes no claim locks. A member
// whose key is not taken is answered claim; one whose key was used for
// other content gets its refusal. An error is a failure of the statement
// as a whole.
func replayKeys(ctx context.Context, q *db.Queries, ms []message) ([]memberAnswer, error) {
	p := db.IdempotencyKeyReplayAllParams{Action: auditevent.DuplicateBlocked}
	for _, m := range ms {
		k := m.keyID()
		p.TenantIds, p.EnvironmentIds = append(p.TenantIds, k.TenantID), append(p.EnvironmentIds, k.EnvironmentID)
		p.Scopes, p.Keys = append(p.Scopes, k.Scope), append(p.Keys, k.Key)
		p.RequestHashes, p.Actors = append(p.RequestHashes, m.requestHash[:]), append(p.Actors, m.Source.Actor)
		p.Details, p.ContentHashes = append(p.Details, m.blocked), append(p.ContentHashes, m.contentHash[:])
		p.MessageTypeIds = append(p.MessageTypeIds, m.MessageType.ID)
	}
	rows, err := db.One(ctx, q, (*db.Queries).IdempotencyKeyReplayAll, p)
	if err != nil {
		return nil, fmt.Errorf("replay idempotency keys: %w", err)
	}
	if len(rows) != len(ms) {
		return nil, fmt.Errorf("replay idempotency keys: %d answers for %d messages", len(rows), len(ms))
	}
	answers := make([]memberAnswer, len(ms))
	for i, m := range ms {
		res, replayed, err := replayAnswer(m.keyID(), 1, db.IdempotencyKeyReplayRow(rows[i]), rows[i].ResponseBody != nil)
		answers[i] = memberAnswer{res: res, err: err, claim: err == nil && !replayed}
	}
	return answers, nil
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
