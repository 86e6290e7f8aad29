package sender

import (
	"context"
	"crypto/sha256"
	"errors"
	"strconv"
	"sync"
	"time"

	"golang.org/x/sync/singleflight"
)

// callerCache remembers, for at most ttl, what the lookup of an API key
// answered: the caller and its tenant's message types. It saves every
// request of a known key the round trip to PostgreSQL that would otherwise
// come before anything else.
//
// Entries are keyed by the SHA-256 of the key, as the database stores it,
// so the process never keeps a presented key. Only keys that authenticated
// are kept: an unknown key is looked up every time, as before, so a client
// sending random keys grows nothing and skips no database work. The
// entries are therefore bounded by the live keys in use, and expired ones
// are swept as the map grows.
//
// How stale an entry may be: at most ttl after its lookup started, and
// never past the key's own revoked_at (a rotated key in its grace period).
// Changes made by this process (the admin's revoke, rotate and type
// editor) forget the entries at once; changes made elsewhere (the CLI,
// another replica, SQL) forget them when their notification arrives (see
// Listen), or at the latest when they expire.
type callerCache struct {
	ttl time.Duration
	now func() time.Time

	mu      sync.Mutex
	entries map[[sha256.Size]byte]cachedCaller
	// generation counts the times entries were forgotten. A lookup stores
	// its answer only if none was forgotten since it started: one that
	// read the database before a revocation committed would otherwise put
	// the revoked key back after the revocation forgot it.
	generation uint64
	// sweepAt is the size at which expired entries are swept before the
	// next one is added.
	sweepAt int

	// flights lets the requests of one key that miss at the same moment
	// share one lookup instead of each making its own.
	flights singleflight.Group
}

type cachedCaller struct {
	who     Typed
	expires time.Time
}

// minSweep is the smallest map worth sweeping: below it, expired entries
// cost less than looking at them.
const minSweep = 64

// lookupTimeout bounds a shared lookup, which runs apart from the request
// that started it: that request may end (its client gone) while others
// still wait for the answer.
const lookupTimeout = 10 * time.Second

func newCallerCache(ttl time.Duration) *callerCache {
	return &callerCache{ttl: ttl, now: time.Now, entries: map[[sha256.Size]byte]cachedCaller{}, sweepAt: minSweep}
}

// lookup is a database lookup of a key: the caller with its types, and the
// time the key stops working (nil: when it is revoked).
type lookup func(ctx context.Context) (who Typed, stops *time.Time, err error)

// get returns the entry of hash if it is still fresh (cached), or else
// what load answers, shared by every request of hash that misses
// meanwhile.
func (c *callerCache) get(ctx context.Context, hash [sha256.Size]byte, load lookup) (who Typed, cached bool, err error) {
	c.mu.Lock()
	e, ok := c.entries[hash]
	generation := c.generation
	c.mu.Unlock()
	if ok && c.now().Before(e.expires) {
		return e.who, true, nil
	}
	// A request that arrives after entries were forgotten must not join a
	// lookup that started before: the flight is named by the generation
	// too. The hash is of fixed length, so the name is unambiguous.
	flight := string(hash[:]) + strconv.FormatUint(generation, 10)
	ch := c.flights.DoChan(flight, func() (any, error) {
		ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), lookupTimeout)
		defer cancel()
		started := c.now()
		who, stops, err := load(ctx)
		if errors.Is(err, ErrBadAPIKey) {
			c.drop(hash)
		}
		if err != nil {
			return Typed{}, err
		}
		expires := started.Add(c.ttl)
		if stops != nil && stops.Before(expires) {
			expires = *stops
		}
		c.store(hash, generation, cachedCaller{who: who, expires: expires})
		return who, nil
	})
	select {
	case r := <-ch:
		return r.Val.(Typed), false, r.Err
	case <-ctx.Done():
		return Typed{}, false, ctx.Err()
	}
}

// store adds e unless entries were forgotten since generation.
func (c *callerCache) store(hash [sha256.Size]byte, generation uint64, e cachedCaller) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.generation != generation {
		return
	}
	if len(c.entries) >= c.sweepAt {
		now := c.now()
		for h, old := range c.entries {
			if !now.Before(old.expires) {
				delete(c.entries, h)
			}
		}
		c.sweepAt = max(2*len(c.entries), minSweep)
	}
	c.entries[hash] = e
}

// drop forgets the entry of a key that no longer authenticates.
func (c *callerCache) drop(hash [sha256.Size]byte) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.entries, hash)
}

// forgetTenant forgets every entry of the tenant, and stops the lookups
// under way from storing what they read.
func (c *callerCache) forgetTenant(tenantID int64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.generation++
	for h, e := range c.entries {
		if e.who.TenantID == tenantID {
			delete(c.entries, h)
		}
	}
}

// forgetAll forgets every entry, and stops the lookups under way from
// storing what they read.
func (c *callerCache) forgetAll() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.generation++
	clear(c.entries)
}
