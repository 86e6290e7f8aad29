package ingest

import (
	"cmp"
	"crypto/sha256"
	"encoding/binary"
	"slices"
	"strconv"

	"github.com/lefia/edihub/internal/db"
)

// MaxClaimLocks bounds the advisory locks a batch or a packet takes before
// it claims anything, whatever its size. PostgreSQL keeps the locks of
// every session in one table the whole cluster shares, of about
// max_locks_per_transaction × max_connections entries (64 × 100 by
// default): one lock per claim let a single packet of 13,000 IDocs fill it,
// and then its own transaction and every other session's fail with "out of
// shared memory". The bound lets the batches and packets of 100 messages
// that senders and the benchmarks send still take a lock per claim. (A
// group of single messages, at most maxGroupMessages of as many tenants,
// takes at most twice that many.)
const MaxClaimLocks = 128

// claimLocks returns the advisory locks a request takes before it claims
// what ms will claim (fingerprints and Idempotency-Keys), ordered by id:
// every request takes its locks in that one global order, so two requests
// holding the same messages in different orders wait for each other rather
// than each holding what the other needs (MessageClaimLocks).
//
// A request of fewer than MaxClaimLocks claims takes one exclusive lock
// per claim behind a shared lock on each tenant environment it claims in,
// so requests of different messages go side by side. A request of more
// takes the exclusive lock of its tenant environment instead: it waits for,
// and holds up while it is decided, the other requests that claim anything
// in that environment, a group holding one of its messages among them.
// Either way two requests that may claim the same thing hold one lock in
// conflicting modes. A collision of two ids only makes their requests wait
// for each other.
func claimLocks(ms []message) db.MessageClaimLocksParams {
	claims := make([]int64, 0, len(ms))
	var environments []int64
	var last *message // whose environment's lock is environments' last
	for i, m := range ms {
		claim, ok := claimOf(m)
		if !ok {
			continue
		}
		claims = append(claims, lockID(m, claim))
		// A request's messages are mostly of one tenant environment.
		if last == nil || last.TenantID != m.TenantID || last.EnvironmentID != m.EnvironmentID {
			environments = append(environments, lockID(m, "environment"))
			last = &ms[i]
		}
	}
	claims, environments = sortedSet(claims), sortedSet(environments)
	if len(claims) >= MaxClaimLocks {
		return lockParams(nil, environments)
	}
	return lockParams(environments, claims)
}

// claimOf names what m claims: its Idempotency-Key in its scope, or its
// fingerprint; ok is false when it claims nothing.
func claimOf(m message) (claim string, ok bool) {
	switch {
	case m.IdempotencyKey != "":
		return "key\x00" + m.KeyScope + "\x00" + m.IdempotencyKey, true
	case m.fingerprint != nil:
		return "fingerprint\x00" + *m.fingerprint, true
	}
	return "", false
}

// lockID is the advisory lock id of name in m's tenant environment.
func lockID(m message, name string) int64 {
	var room [128]byte // most names fit: the id is hashed without an allocation
	b := strconv.AppendInt(room[:0], m.TenantID, 10)
	b = strconv.AppendInt(append(b, 0), m.EnvironmentID, 10)
	sum := sha256.Sum256(append(append(b, 0), name...))
	return int64(binary.BigEndian.Uint64(sum[:8]))
}

func sortedSet(ids []int64) []int64 {
	slices.Sort(ids)
	return slices.Compact(ids)
}

// lockParams orders the shared and exclusive locks by id; an id in both
// (a collision) is taken once, exclusive.
func lockParams(shared, exclusive []int64) db.MessageClaimLocksParams {
	type lock struct {
		id     int64
		shared bool
	}
	locks := make([]lock, 0, len(shared)+len(exclusive))
	for _, id := range exclusive {
		locks = append(locks, lock{id: id})
	}
	for _, id := range shared {
		locks = append(locks, lock{id: id, shared: true})
	}
	// Stable, so that of two locks of one id the exclusive, put first, stays.
	slices.SortStableFunc(locks, func(a, b lock) int { return cmp.Compare(a.id, b.id) })
	locks = slices.CompactFunc(locks, func(a, b lock) bool { return a.id == b.id })
	p := db.MessageClaimLocksParams{ClaimLocks: make([]int64, len(locks)), Shared: make([]bool, len(locks))}
	for i, l := range locks {
		p.ClaimLocks[i], p.Shared[i] = l.id, l.shared
	}
	return p
}

// noLocks is what a message decided alone takes: a transaction that claims
// one thing holds no claim another could wait for while it waits, so it
// cannot deadlock (decideAll).
var noLocks db.MessageClaimLocksParams
