package ingest

import (
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/lefia/edihub/internal/db"
)

func claiming(tenant int64, fingerprint string) message {
	m := message{fingerprint: &fingerprint}
	m.TenantID, m.EnvironmentID = tenant, 1
	return m
}

// A request takes one lock per claim behind its tenant environment's shared
// lock while they are fewer than MaxClaimLocks, and its tenant
// environment's exclusive lock alone from then on; a group of single
// messages of as many tenants as it may hold locks each claim.
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
	shared := func(p db.MessageClaimLocksParams) int {
		n := 0
		for i, s := range p.Shared {
			if s {
				n++
			}
			if i > 0 {
				require.Less(t, p.ClaimLocks[i-1], p.ClaimLocks[i], "ordered by id")
			}
		}
		return n
	}

	few := claimLocks(of(MaxClaimLocks-1, one))
	require.Len(t, few.ClaimLocks, MaxClaimLocks)
	require.Equal(t, 1, shared(few), "the tenant environment's lock, shared")

	many := claimLocks(of(MaxClaimLocks, one))
	require.Equal(t, []bool{false}, many.Shared, "the tenant environment's lock alone, exclusive")
	require.Equal(t, claimLocks(of(10_000, one)), many)

	group := claimLocks(of(maxGroupMessages, func(i int) int64 { return int64(i) }))
	require.Len(t, group.ClaimLocks, 2*maxGroupMessages)
	require.Equal(t, maxGroupMessages, shared(group), "each member's tenant environment, shared")
	require.Less(t, maxGroupMessages, MaxClaimLocks, "a group never locks a whole environment")
}
