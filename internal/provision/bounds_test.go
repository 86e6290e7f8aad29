package provision_test

import (
	"context"
	"fmt"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/lefia/edihub/internal/apperr"
	"github.com/lefia/edihub/internal/egress"
	"github.com/lefia/edihub/internal/messagetype"
	"github.com/lefia/edihub/internal/pgtest"
	"github.com/lefia/edihub/internal/provision"
	"github.com/lefia/edihub/internal/testfactory"
)

// A tenant has at most MaxDestinationsPerTenant destinations and
// messagetype.MaxTypesPerTenant message types, however many are created at
// once: every destination multiplies the work of every message, and every
// type adds series to the metrics. Another tenant is not held back by the
// first one's bound.
func TestTenantBoundsHoldUnderConcurrentCreation(t *testing.T) {
	t.Parallel()
	policy, err := egress.ParsePolicy("127.0.0.0/8")
	require.NoError(t, err)
	tests := []struct {
		name, problem, table string
		max                  int
		fill                 string // SQL writing $1 rows for tenant acme
		create               func(svc *provision.Service, tenant string, i int) error
	}{
		{
			name: "destinations", problem: "too-many-destinations", table: "destinations", max: provision.MaxDestinationsPerTenant,
			fill: `INSERT INTO destinations (tenant_id, environment_id, url, secret)
				SELECT e.tenant_id, e.id, 'http://127.0.0.1:9/' || g, 'whsec_x' FROM environments e JOIN tenants t ON t.id = e.tenant_id,
				generate_series(1, $1) g WHERE t.slug = 'acme'`,
			create: func(svc *provision.Service, tenant string, i int) error {
				_, _, err := svc.CreateDestination(context.Background(), provision.DestinationSpec{
					TenantSlug: tenant, EnvironmentSlug: "production", URL: fmt.Sprintf("http://127.0.0.1:9/new/%d", i), MaxConcurrency: 4,
				}, policy)
				return err
			},
		},
		{
			name: "message types", problem: "too-many-message-types", table: "message_types", max: messagetype.MaxTypesPerTenant,
			fill: `INSERT INTO message_types (tenant_id, code) SELECT t.id, 'TYPE' || g FROM tenants t, generate_series(1, $1) g WHERE t.slug = 'acme'`,
			create: func(svc *provision.Service, tenant string, i int) error {
				_, err := svc.CreateMessageType(context.Background(), tenant, provision.MessageTypeSpec{Code: fmt.Sprintf("NEW%d", i)})
				return err
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			pool := pgtest.Pool(t)
			testfactory.TenantWithEnvironment(t, pool, "acme")
			testfactory.TenantWithEnvironment(t, pool, "globex")
			_, err := pool.Exec(context.Background(), tt.fill, tt.max-5)
			require.NoError(t, err)
			svc := provision.New(pool)

			var (
				wg      sync.WaitGroup
				mu      sync.Mutex
				created int
				refused []error
			)
			for i := range 20 {
				wg.Go(func() {
					err := tt.create(svc, "acme", i)
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
				require.Equal(t, tt.problem, e.Type)
				require.Equal(t, apperr.Conflict, e.Kind)
				require.ErrorContains(t, err, fmt.Sprintf("tenant acme has %d %s, the most a tenant may have", tt.max, tt.name))
			}
			require.Equal(t, tt.max, pgtest.Count(t, pool, `SELECT count(*) FROM `+tt.table+` x JOIN tenants t ON t.id = x.tenant_id WHERE t.slug = 'acme'`))
			require.NoError(t, tt.create(svc, "globex", 0), "another tenant has room")
		})
	}
}
