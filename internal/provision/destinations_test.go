package provision_test

import (
	"context"
	"fmt"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/lefia/edihub/internal/apperr"
	"github.com/lefia/edihub/internal/egress"
	"github.com/lefia/edihub/internal/pgtest"
	"github.com/lefia/edihub/internal/provision"
	"github.com/lefia/edihub/internal/testfactory"
)

// A tenant has at most MaxDestinationsPerTenant destinations, however many
// are created at once: every destination multiplies the work of every
// message, and each used to cost the database a poll a second. Another
// tenant is not held back by the first one's bound.
func TestDestinationsPerTenantAreBounded(t *testing.T) {
	t.Parallel()
	pool := pgtest.Pool(t)
	testfactory.TenantWithEnvironment(t, pool, "acme")
	testfactory.TenantWithEnvironment(t, pool, "globex")
	const already = provision.MaxDestinationsPerTenant - 5
	_, err := pool.Exec(context.Background(), `INSERT INTO destinations (tenant_id, environment_id, url, secret)
		SELECT e.tenant_id, e.id, 'http://127.0.0.1:9/' || g, 'whsec_x' FROM environments e JOIN tenants t ON t.id = e.tenant_id,
		generate_series(1, $1) g WHERE t.slug = 'acme'`, already)
	require.NoError(t, err)
	policy, err := egress.ParsePolicy("127.0.0.0/8")
	require.NoError(t, err)
	svc := provision.New(pool)
	create := func(tenant string, i int) error {
		_, _, err := svc.CreateDestination(context.Background(), provision.DestinationSpec{
			TenantSlug: tenant, EnvironmentSlug: "production", URL: fmt.Sprintf("http://127.0.0.1:9/new/%d", i), MaxConcurrency: 4,
		}, policy)
		return err
	}

	var (
		wg      sync.WaitGroup
		mu      sync.Mutex
		created int
		refused []error
	)
	for i := range 20 {
		wg.Go(func() {
			err := create("acme", i)
			mu.Lock()
			defer mu.Unlock()
			if err == nil {
				created++
			} else {
				refused = append(refused, err)
			}
		})
	}
	wg.Wait()
	require.Equal(t, 5, created)
	require.Len(t, refused, 15)
	for _, err := range refused {
		e, ok := apperr.As(err)
		require.True(t, ok, "%v", err)
		require.Equal(t, "too-many-destinations", e.Type)
		require.ErrorContains(t, err, fmt.Sprintf("tenant acme has %d destinations, the most a tenant may have", provision.MaxDestinationsPerTenant))
	}
	require.Equal(t, provision.MaxDestinationsPerTenant, pgtest.Count(t, pool, `SELECT count(*) FROM destinations d JOIN tenants t ON t.id = d.tenant_id WHERE t.slug = 'acme'`))
	require.NoError(t, create("globex", 0), "another tenant has room")
}
