// Package throttle slows down clients that keep failing, such as a client
// guessing API keys: per client address, in memory, a client may fail a few
// times at once and then once an interval; past that it is told how long
// to wait, before anything is looked up for it. Clients that do not fail
// are never counted, and asking costs a map lookup.
//
// Each process counts on its own: with several replicas behind a load
// balancer, a client may fail that many times more. The limit is there to
// keep a guesser from making the hub look up hundreds of keys a second, and
// a per-process limit does that.
package throttle

import (
	"net/netip"
	"sync/atomic"
	"time"

	lru "github.com/hashicorp/golang-lru/v2"
)

// Failures counts the failures of recent clients.
//
// Each client has a time by which its failures are paid off, one interval
// per failure (the generic cell rate algorithm): a client whose time lies
// more than burst-1 intervals ahead has failed burst times faster than one
// an interval, and must wait until it no longer does.
type Failures struct {
	interval time.Duration
	slack    time.Duration // (burst-1) intervals
	// clients is bounded: past its size the client that failed least
	// recently is forgotten, so that many addresses cannot exhaust memory.
	clients *lru.Cache[netip.Prefix, *client]
	now     func() time.Time
}

type client struct {
	paidOff atomic.Int64 // Unix nanoseconds
}

// New returns a Failures that lets a client fail burst times at once, then
// once an interval, and remembers at most maxClients clients.
func New(burst int, interval time.Duration, maxClients int) *Failures {
	clients, err := lru.New[netip.Prefix, *client](maxClients)
	if err != nil {
		panic(err) // only for a size below 1, a programming error
	}
	return &Failures{interval: interval, slack: time.Duration(burst-1) * interval, clients: clients, now: time.Now}
}

// Wait returns how long the client at addr must wait before it may try
// again: 0 when it may try now.
func (f *Failures) Wait(addr string) time.Duration {
	c, ok := f.clients.Peek(clientOf(addr))
	if !ok {
		return 0
	}
	ahead := time.Duration(c.paidOff.Load() - f.now().UnixNano())
	return max(0, ahead-f.slack)
}

// Fail records a failure of the client at addr.
func (f *Failures) Fail(addr string) {
	key := clientOf(addr)
	c, ok := f.clients.Get(key)
	if !ok {
		// Another failure of the same client may have added it meanwhile.
		c = new(client)
		if prev, found, _ := f.clients.PeekOrAdd(key, c); found {
			c = prev
		}
	}
	now := f.now().UnixNano()
	for {
		paidOff := c.paidOff.Load()
		if c.paidOff.CompareAndSwap(paidOff, max(paidOff, now)+int64(f.interval)) {
			return
		}
	}
}

// clientOf names the client at addr: the address itself, or for IPv6 its
// /64, which a single host is commonly given whole and could otherwise
// change at will. An address that cannot be read is one client with every
// other such address.
func clientOf(addr string) netip.Prefix {
	ip, err := netip.ParseAddr(addr)
	if err != nil {
		return netip.Prefix{}
	}
	ip = ip.Unmap().WithZone("")
	bits := 32
	if ip.Is6() {
		bits = 64
	}
	prefix, _ := ip.Prefix(bits)
	return prefix
}
