package ingest_test

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/lefia/edihub/internal/db"
	"github.com/lefia/edihub/internal/delivery"
	"github.com/lefia/edihub/internal/ingest"
	"github.com/lefia/edihub/internal/messagetype"
	"github.com/lefia/edihub/internal/pgtest"
	"github.com/lefia/edihub/internal/testfactory"
)

// With confirmed commits, nothing is acknowledged that a synchronous
// standby does not have: on a primary going on alone (its standby
// asynchronous, its slot kept), a single message, the members of a group
// committed together, a message with an Idempotency-Key and that key's
// replay each fail with db.ErrCommitUnconfirmed, stored on the primary
// all the same. Once the standby is synchronous, each sent again is
// answered as what was stored: the key replays its first answer, the
// others are duplicates, and nothing is stored twice.
func TestUnconfirmedCommitsAreNotAcknowledged(t *testing.T) {
	t.Parallel()
	primary := pgtest.NewCluster(t)
	primary.NewStandby()
	pool := pgtest.PoolFor(t, primary.MigratedURL())
	tenant, env := testfactory.TenantWithEnvironment(t, pool, "acme")
	orders := messagetype.Prepare(testfactory.MessageType(t, pool, &testfactory.MessageTypeOpts{Fields: []string{"id"}}))
	var failedGroups atomic.Int32
	in := ingest.New(pool, time.Hour, delivery.NewService(pool, 3), ingest.WithConfirmedCommits(func() bool { return true }),
		ingest.WithGroupObserver(func(size int, failed bool) {
			if size > 1 && failed {
				failedGroups.Add(1)
			}
		}))
	ctx := context.Background()
	req := func(id string) ingest.Request {
		return ingest.Request{
			TenantID: tenant.ID, EnvironmentID: env.ID, MessageType: orders, Payload: fmt.Appendf(nil, `{"id": %q}`, id),
			Source: ingest.Source{Endpoint: ingest.EndpointReceiveMessage, RemoteAddr: "192.0.2.1", Actor: "test"},
		}
	}
	keyed := req("keyed")
	keyed.IdempotencyKey = "k-1"
	// sendAll sends reqs at once, so that the group commit takes several of
	// them into one transaction, and returns their outcomes and errors.
	sendAll := func(reqs []ingest.Request) ([]ingest.Outcome, []error) {
		outcomes, errs := make([]ingest.Outcome, len(reqs)), make([]error, len(reqs))
		var wg sync.WaitGroup
		for i, r := range reqs {
			wg.Go(func() {
				res, err := in.Receive(ctx, r)
				outcomes[i], errs[i] = res.Outcome, err
			})
		}
		wg.Wait()
		return outcomes, errs
	}
	var reqs []ingest.Request
	for i := range 16 {
		reqs = append(reqs, req(fmt.Sprint(i)))
	}
	reqs = append(reqs, keyed)

	_, errs := sendAll(reqs)
	for i, err := range errs {
		require.ErrorIs(t, err, db.ErrCommitUnconfirmed, "request %d", i)
	}
	require.NotZero(t, failedGroups.Load(), "members of a group were answered so")
	_, err := in.Receive(ctx, keyed)
	require.ErrorIs(t, err, db.ErrCommitUnconfirmed, "a replay of the key")
	require.Equal(t, len(reqs), pgtest.Count(t, pool, `SELECT count(*) FROM messages`), "stored on the primary all the same")

	primary.Synchronous(pgtest.StandbySlot)
	outcomes, errs := sendAll(reqs)
	for i := range reqs {
		require.NoError(t, errs[i], "request %d", i)
	}
	for i := range 16 {
		require.Equal(t, ingest.DuplicateFingerprint, outcomes[i], "request %d", i)
	}
	require.Equal(t, ingest.ReplayedKey, outcomes[16])
	require.Equal(t, len(reqs), pgtest.Count(t, pool, `SELECT count(*) FROM messages`), "nothing stored twice")
}
