package loadgen

import (
	"context"
	"net/http/httptest"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/lefia/edihub/internal/pgtest"
	"github.com/lefia/edihub/internal/testfactory"
)

// The floor stores each request's body as a new message, with the insert
// pgbench runs, and answers it as edihub answers a new message, so that a
// load row measures it exactly as it measures edihub.
func TestFloorStoresEveryRequestAsANewMessage(t *testing.T) {
	t.Parallel()
	pool := pgtest.Pool(t)
	tenant, env := testfactory.TenantWithEnvironment(t, pool, "bench")
	mt := testfactory.MessageType(t, pool, &testfactory.MessageTypeOpts{Tenant: "bench"})
	srv := httptest.NewServer(Floor{Pool: pool, TenantID: tenant.ID, EnvironmentID: env.ID, MessageTypeID: mt.ID})
	t.Cleanup(srv.Close)

	const clients, requests = 4, 5
	res, err := Run(context.Background(), Config{
		URL: srv.URL, APIKey: "unused", Mix: MixNew, Clients: clients, Requests: requests, PayloadSize: 512,
	})
	require.NoError(t, err)
	require.Zero(t, res.Errors, res.FirstError)
	require.Equal(t, clients*requests, res.Requests)

	stored := pgtest.Count(t, pool, `SELECT count(*) FROM messages
		WHERE tenant_id = $1 AND environment_id = $2 AND message_type_id = $3
		  AND payload::jsonb ? 'payload' AND fingerprint ~ '^[0-9a-f]{64}$'`, tenant.ID, env.ID, mt.ID)
	require.Equal(t, clients*requests, stored, "each request's body is a message of its own")
}

// The batch floor stores every envelope of a batch as a message, its payload
// as sent, and answers with a receipt each, as a load row of batches checks.
func TestFloorStoresEveryEnvelopeOfABatch(t *testing.T) {
	t.Parallel()
	pool := pgtest.Pool(t)
	tenant, env := testfactory.TenantWithEnvironment(t, pool, "bench")
	mt := testfactory.MessageType(t, pool, &testfactory.MessageTypeOpts{Tenant: "bench"})
	srv := httptest.NewServer(Floor{Pool: pool, TenantID: tenant.ID, EnvironmentID: env.ID, MessageTypeID: mt.ID})
	t.Cleanup(srv.Close)

	const clients, requests, perRequest = 4, 3, 100
	res, err := Run(context.Background(), Config{
		URL: srv.URL, APIKey: "unused", Mix: MixNew, Form: FormBatch, PerRequest: perRequest,
		Clients: clients, Requests: requests, PayloadSize: 512,
	})
	require.NoError(t, err)
	require.Zero(t, res.Errors, res.FirstError)
	require.Equal(t, clients*requests, res.Requests)

	stored := pgtest.Count(t, pool, `SELECT count(DISTINCT docnum) FROM messages
		WHERE tenant_id = $1 AND environment_id = $2 AND message_type_id = $3
		  AND payload::jsonb -> 'ORDERS05' ? 'IDOC' AND fingerprint ~ '^[0-9a-f]{64}$'`, tenant.ID, env.ID, mt.ID)
	require.Equal(t, clients*requests*perRequest, stored, "each envelope is a message of its own, its payload as sent")
}

// The floor of IDoc-XML packets and of X12 and EDIFACT interchanges reads
// each request with edihub's parser and stores every IDoc or transaction
// set as a message of its own, its own bytes as edihub stores them, and
// answers as a load row of that form checks.
func TestFloorStoresEveryMessageOfAPacketOrInterchange(t *testing.T) {
	t.Parallel()
	for _, form := range []Form{FormPacket, FormX12, FormEDIFACT} {
		t.Run(string(form), func(t *testing.T) {
			t.Parallel()
			pool := pgtest.Pool(t)
			tenant, env := testfactory.TenantWithEnvironment(t, pool, "bench")
			mt := testfactory.MessageType(t, pool, &testfactory.MessageTypeOpts{Tenant: "bench"})
			srv := httptest.NewServer(Floor{Pool: pool, TenantID: tenant.ID, EnvironmentID: env.ID, MessageTypeID: mt.ID})
			t.Cleanup(srv.Close)

			const clients, requests, perRequest = 2, 3, 20
			res, err := Run(context.Background(), Config{
				URL: srv.URL, APIKey: "unused", Mix: MixNew, Form: form, PerRequest: perRequest,
				Clients: clients, Requests: requests, PayloadSize: 512,
			})
			require.NoError(t, err)
			require.Zero(t, res.Errors, res.FirstError)
			require.Equal(t, clients*requests, res.Requests)

			want := map[Form]string{FormPacket: `^<\?xml.*<IDOC BEGIN="1">.*</IDOC>\s*</ORDERS05>\s*$`,
				FormX12: `^ST\*850\*.*SE\*\d+\*\w+~$`, FormEDIFACT: `^UNH\+.*UNT\+\d+\+\w+'$`}[form]
			stored := pgtest.Count(t, pool, `SELECT count(DISTINCT received_bytes) FROM messages
				WHERE tenant_id = $1 AND environment_id = $2 AND message_type_id = $3 AND payload IS NULL
				  AND convert_from(received_bytes, 'UTF8') ~ $4 AND fingerprint ~ '^[0-9a-f]{64}$'`,
				tenant.ID, env.ID, mt.ID, `(?s)`+want)
			require.Equal(t, clients*requests*perRequest, stored, "each message is stored alone, as its own bytes")
		})
	}
}
