package ingest

import (
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"
)

func claiming(tenant int64, fingerprint string) message {
	m := message{fingerprint: &fingerprint}
	m.TenantID, m.EnvironmentID = tenant, 1
	return m
}

// A request takes one lock per claim behind its tenant environment's shared
// lock while they are few, and its tenant environment's exclusive lock
// alone beyond MaxClaimLocks; a group of single messages of as many tenants
// as it may hold stays within the bound too.
func TestClaimLocksAreBounded(t *testing.T) {
	t.Parallel()
	of := func(n int, tenant func(i int) int64) []message {
		ms := make([]message, n)
		for i := range ms {
			ms[i] = claiming(tenant(i), "f"+strconv.Itoa(i))
		}
		return ms
	}
	one := func(int) int64 { return 1 }

	few := claimLocks(of(MaxClaimLocks-1, one))
	require.Len(t, few.ClaimLocks, MaxClaimLocks)
	shared := 0
	for i, s := range few.Shared {
		if s {
			shared++
		}
		if i > 0 {
			require.Less(t, few.ClaimLocks[i-1], few.ClaimLocks[i], "ordered by id")
		}
	}
	require.Equal(t, 1, shared, "the tenant environment's lock, shared")

	many := claimLocks(of(MaxClaimLocks, one))
	require.Equal(t, []bool{false}, many.Shared, "the tenant environment's lock alone, exclusive")
	require.Equal(t, claimLocks(of(10_000, one)), many)

	group := claimLocks(of(maxGroupMessages, func(i int) int64 { return int64(i) }))
	require.Len(t, group.ClaimLocks, maxGroupMessages, "each member's tenant environment, exclusive")
	require.LessOrEqual(t, maxGroupMessages, MaxClaimLocks)
}
