package server_test

import (
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// A single server has no synchronous standby: /readyz says so, and with
// REQUIRE_SYNCHRONOUS_STANDBY intake answers 503 with Retry-After instead
// of acknowledging a message that is on one machine, and stores nothing.
func TestRequireSynchronousStandbyRefusesOneMachine(t *testing.T) {
	t.Parallel()
	order := []byte(`{"message_type":"ORDERS05","docnum":"1","payload":{"n":1}}`)

	b := serveReal(t, map[string]string{"REQUIRE_SYNCHRONOUS_STANDBY": "true"}, io.Discard)
	b.messageType(t, "ORDERS05", nil, nil)
	r := b.post(t, order)
	require.Equal(t, http.StatusServiceUnavailable, r.status, "%s", r.body)
	require.Equal(t, "no-synchronous-standby", r.json(t)["type"])
	require.NotEmpty(t, r.header.Get("Retry-After"))
	batch := b.postTo(t, "/api/edi-hub/receive-messages", []byte(`{"messages":[`+string(order)+`]}`))
	require.Equal(t, http.StatusServiceUnavailable, batch.status, "%s", batch.body)
	require.Zero(t, b.count(t, `SELECT count(*) FROM messages`), "nothing is stored")
	ready := do(t, http.MethodGet, b.url+"/readyz", nil, nil)
	require.Equal(t, http.StatusServiceUnavailable, ready.status)
	require.Equal(t, "single server", ready.json(t)["replication"])

	// Without the setting, the same server acknowledges, and says where.
	plain := serveReal(t, nil, io.Discard)
	plain.messageType(t, "ORDERS05", nil, nil)
	require.Equal(t, http.StatusCreated, plain.post(t, order).status)
	ready = do(t, http.MethodGet, plain.url+"/readyz", nil, nil)
	require.Equal(t, http.StatusOK, ready.status)
	require.True(t, strings.HasPrefix(ready.json(t)["replication"].(string), "single server"))
}
