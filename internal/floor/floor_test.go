package floor_test

import (
	"context"
	"net/http/httptest"
	"testing"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"

	"github.com/lefia/edihub/internal/floor"
	"github.com/lefia/edihub/internal/loadgen"
	"github.com/lefia/edihub/internal/pgtest"
	"github.com/lefia/edihub/internal/testfactory"
)

// site is a floor serving a bench tenant of its own database.
type site struct {
	pool                             *pgxpool.Pool
	tenant, environment, messageType int64
	url                              string
}

func newSite(t *testing.T) site {
	t.Helper()
	pool := pgtest.Pool(t)
	tenant, env := testfactory.TenantWithEnvironment(t, pool, "bench")
	mt := testfactory.MessageType(t, pool, &testfactory.MessageTypeOpts{Tenant: "bench"})
	srv := httptest.NewServer(floor.Floor{Pool: pool, TenantID: tenant.ID, EnvironmentID: env.ID, MessageTypeID: mt.ID})
	t.Cleanup(srv.Close)
	return site{pool: pool, tenant: tenant.ID, environment: env.ID, messageType: mt.ID, url: srv.URL}
}

// load runs new messages of cfg's form against the floor, as a bench row
// does, and requires every answer to be one the row counts.
func (s site) load(t *testing.T, cfg loadgen.Config) {
	t.Helper()
	cfg.URL, cfg.APIKey, cfg.Mix, cfg.PayloadSize = s.url, "unused", loadgen.MixNew, 512
	res, err := loadgen.Run(context.Background(), cfg)
	require.NoError(t, err)
	require.Zero(t, res.Errors, res.FirstError)
	require.Equal(t, cfg.Clients*cfg.Requests, res.Requests)
}

// stored counts the bench tenant's messages that match where.
func (s site) stored(t *testing.T, where string, args ...any) int {
	t.Helper()
	return pgtest.Count(t, s.pool, `SELECT `+where+` FROM messages
		WHERE tenant_id = $1 AND environment_id = $2 AND message_type_id = $3`,
		append([]any{s.tenant, s.environment, s.messageType}, args...)...)
}

// The floor stores each request's body as a new message, with the insert
// pgbench runs, and answers it as edihub answers a new message, so that a
// load row measures it exactly as it measures edihub.
func TestFloorStoresEveryRequestAsANewMessage(t *testing.T) {
	t.Parallel()
	s := newSite(t)
	const clients, requests = 4, 5
	s.load(t, loadgen.Config{Clients: clients, Requests: requests})

	stored := s.stored(t, `count(*) FILTER (WHERE payload::jsonb ? 'payload' AND fingerprint ~ '^[0-9a-f]{64}$')`)
	require.Equal(t, clients*requests, stored, "each request's body is a message of its own")
}

// The batch floor stores every envelope of a batch as a message, its payload
// as sent, and answers with a receipt each, as a load row of batches checks.
func TestFloorStoresEveryEnvelopeOfABatch(t *testing.T) {
	t.Parallel()
	s := newSite(t)
	const clients, requests, perRequest = 4, 3, 100
	s.load(t, loadgen.Config{Form: loadgen.FormBatch, PerRequest: perRequest, Clients: clients, Requests: requests})

	stored := s.stored(t, `count(DISTINCT docnum) FILTER (WHERE payload::jsonb -> 'ORDERS05' ? 'IDOC' AND fingerprint ~ '^[0-9a-f]{64}$')`)
	require.Equal(t, clients*requests*perRequest, stored, "each envelope is a message of its own, its payload as sent")
}

// The floor of IDoc-XML packets and of X12 and EDIFACT interchanges reads
// each request with edihub's parser and stores every IDoc or transaction
// set as a message of its own, its own bytes as edihub stores them, and
// answers as a load row of that form checks.
func TestFloorStoresEveryMessageOfAPacketOrInterchange(t *testing.T) {
	t.Parallel()
	own := map[loadgen.Form]string{
		loadgen.FormPacket:  `^<\?xml.*<IDOC BEGIN="1">.*</IDOC>\s*</ORDERS05>\s*$`,
		loadgen.FormX12:     `^ST\*850\*.*SE\*\d+\*\w+~$`,
		loadgen.FormEDIFACT: `^UNH\+.*UNT\+\d+\+\w+'$`,
	}
	for form, pattern := range own {
		t.Run(string(form), func(t *testing.T) {
			t.Parallel()
			s := newSite(t)
			const clients, requests, perRequest = 2, 3, 20
			s.load(t, loadgen.Config{Form: form, PerRequest: perRequest, Clients: clients, Requests: requests})

			stored := s.stored(t, `count(DISTINCT received_bytes) FILTER (WHERE payload IS NULL
				AND convert_from(received_bytes, 'UTF8') ~ $4 AND fingerprint ~ '^[0-9a-f]{64}$')`, `(?s)`+pattern)
			require.Equal(t, clients*requests*perRequest, stored, "each message is stored alone, as its own bytes")
		})
	}
}
