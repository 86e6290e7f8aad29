package refused_test

import (
	"context"
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/lefia/edihub/internal/pgtest"
	"github.com/lefia/edihub/internal/refused"
	"github.com/lefia/edihub/internal/testfactory"
)

func TestCountedAnswers(t *testing.T) {
	t.Parallel()
	for _, status := range []int{400, 401, 403, 413, 415, 422} {
		require.True(t, refused.Counted(status), status)
	}
	for _, status := range []int{200, 201, 404, 408, 429, 500, 503, 504} {
		require.False(t, refused.Counted(status), "%d says nothing of the sender's configuration", status)
	}
	require.True(t, refused.Counted(http.StatusUnprocessableEntity))
}

// Counts reach the database only when flushed, one row per subject and
// minute, added to what other servers wrote.
func TestFlushAddsCountsPerSubjectAndMinute(t *testing.T) {
	t.Parallel()
	pool := pgtest.Pool(t)
	tenant, _ := testfactory.TenantWithEnvironment(t, pool, "acme")
	ctx := context.Background()
	key := refused.Subject{Kind: refused.KindAPIKey, Key: "7", TenantID: tenant.ID}
	integration := refused.Subject{Kind: refused.KindIntegration, Key: "0b5e4c8e-6f69-4d2a-9d4f-0f3c2b1a0e11", TenantID: tenant.ID}

	a, b := refused.New(), refused.New()
	for range 3 {
		a.Count(key)
	}
	b.Count(key)
	b.Count(integration)
	require.Zero(t, pgtest.Count(t, pool, `SELECT count(*) FROM intake_refusals`), "nothing is written per request")
	require.NoError(t, a.Flush(ctx, pool))
	require.NoError(t, b.Flush(ctx, pool))
	require.NoError(t, b.Flush(ctx, pool), "an empty flush writes nothing")

	require.Equal(t, 4, pgtest.Count(t, pool, `SELECT coalesce(sum(refusals), 0) FROM intake_refusals WHERE subject_kind = 'api_key' AND subject_key = '7'`))
	require.Equal(t, 1, pgtest.Count(t, pool, `SELECT coalesce(sum(refusals), 0) FROM intake_refusals WHERE subject_kind = 'integration'`))
	require.LessOrEqual(t, pgtest.Count(t, pool, `SELECT count(*) FROM intake_refusals`), 4, "one row per subject and minute")
}

// Counts that cannot be written are kept for the next flush.
func TestFailedFlushKeepsTheCounts(t *testing.T) {
	t.Parallel()
	pool := pgtest.Pool(t)
	tenant, _ := testfactory.TenantWithEnvironment(t, pool, "acme")
	ctx := context.Background()
	c := refused.New()
	c.Count(refused.Subject{Kind: refused.KindAPIKey, Key: "1", TenantID: tenant.ID})
	c.Count(refused.Subject{Kind: "nonsense", Key: "1", TenantID: tenant.ID}) // the table's check refuses the batch
	require.Error(t, c.Flush(ctx, pool))
	require.Error(t, c.Flush(ctx, pool), "still held")
	require.Zero(t, pgtest.Count(t, pool, `SELECT count(*) FROM intake_refusals`))
}
