package server_test

import (
	"io"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/lefia/edihub/internal/pgtest"
)

// An acknowledgment means two machines (REQUIRE_SYNCHRONOUS_STANDBY, on by
// default). On a primary whose standby confirms no commits, as
// pg_auto_failover leaves one that goes on alone (synchronous_standby_names
// cleared, the standby's slot kept), intake answers 503
// no-synchronous-standby with Retry-After and /readyz 503; once the standby
// is synchronous again the message is acknowledged, stored once.
// REQUIRE_SYNCHRONOUS_STANDBY=false acknowledges on one machine and says
// so; a single server, which has no standby by design, acknowledges.
func TestAnAcknowledgmentNeedsASynchronousStandby(t *testing.T) {
	t.Parallel()
	primary := pgtest.NewCluster(t)
	primary.NewStandby()
	order := []byte(`{"message_type":"ORDERS05","docnum":"1","payload":{"n":1}}`)

	b := serveOn(t, pgtest.PoolFor(t, primary.MigratedURL()), nil, io.Discard)
	b.messageType(t, "ORDERS05", nil, nil)
	r := b.post(t, order)
	require.Equal(t, http.StatusServiceUnavailable, r.status, "%s", r.body)
	require.Equal(t, "no-synchronous-standby", r.json(t)["type"])
	require.NotEmpty(t, r.header.Get("Retry-After"))
	batch := b.postTo(t, "/api/edi-hub/receive-messages", []byte(`{"messages":[`+string(order)+`]}`))
	require.Equal(t, http.StatusServiceUnavailable, batch.status, "%s", batch.body)
	ready := do(t, http.MethodGet, b.url+"/readyz", nil, nil)
	require.Equal(t, http.StatusServiceUnavailable, ready.status)
	require.Equal(t, "no synchronous standby: acknowledged messages are on one machine", ready.json(t)["replication"])

	primary.Synchronous(pgtest.StandbySlot)
	require.Eventually(t, func() bool {
		r = b.post(t, order)
		return r.status == http.StatusCreated || r.status == http.StatusOK
	}, 30*time.Second, 100*time.Millisecond, "acknowledged once the standby confirms")
	require.Equal(t, 1, b.count(t, `SELECT count(*) FROM messages`), "stored once, whether a refused request had stored it or not")
	ready = do(t, http.MethodGet, b.url+"/readyz", nil, nil)
	require.Equal(t, http.StatusOK, ready.status)
	require.Equal(t, "synchronous standby", ready.json(t)["replication"])

	// Without the requirement, a primary alone acknowledges, and says where.
	primary.Synchronous("")
	alone := serveOn(t, pgtest.PoolFor(t, primary.MigratedURL()), map[string]string{"REQUIRE_SYNCHRONOUS_STANDBY": "false"}, io.Discard)
	alone.messageType(t, "ORDERS05", nil, nil)
	require.Eventually(t, func() bool {
		ready := do(t, http.MethodGet, alone.url+"/readyz", nil, nil)
		return ready.status == http.StatusOK && ready.json(t)["replication"] == "no synchronous standby: acknowledged messages are on one machine"
	}, 30*time.Second, 100*time.Millisecond)
	require.Equal(t, http.StatusCreated, alone.post(t, order).status)

	// A single server acknowledges under the default.
	single := serveReal(t, nil, io.Discard)
	single.messageType(t, "ORDERS05", nil, nil)
	require.Equal(t, http.StatusCreated, single.post(t, order).status)
	ready = do(t, http.MethodGet, single.url+"/readyz", nil, nil)
	require.Equal(t, http.StatusOK, ready.status)
	require.Equal(t, "single server", ready.json(t)["replication"])
}
