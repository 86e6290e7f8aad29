package server_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/lefia/edihub/internal/config"
	"github.com/lefia/edihub/internal/pgtest"
)

// smallPacket is an ORDERS05 packet of n IDocs that hold their control
// record only, with the DOCNUMs first, first+1, ….
func smallPacket(n, first int) []byte {
	var b strings.Builder
	b.WriteString(`<?xml version="1.0" encoding="UTF-8"?><ORDERS05>`)
	for i := range n {
		fmt.Fprintf(&b, `<IDOC BEGIN="1"><EDI_DC40 SEGMENT="1"><DOCNUM>%d</DOCNUM>`+
			`<IDOCTYP>ORDERS05</IDOCTYP></EDI_DC40></IDOC>`, first+i)
	}
	b.WriteString(`</ORDERS05>`)
	return []byte(b.String())
}

// setupConfigured is setup with the settings vars.
func setupConfigured(t *testing.T, vars map[string]string) *testBundle {
	t.Helper()
	cfg, err := config.Load(func(k string) string { return vars[k] })
	require.NoError(t, err)
	return setupWith(t, pgtest.Pool(t), cfg)
}

// A packet holds at most MAX_BATCH_MESSAGES IDocs, as a batch does: one
// more is 413 naming the limit, and nothing of it is stored.
func TestPacketOfTooManyIDocs(t *testing.T) {
	t.Parallel()
	b := setupConfigured(t, map[string]string{"MAX_BATCH_MESSAGES": "40"})
	b.messageType(t, "ORDERS05", nil, nil)
	require.Len(t, packetResults(t, b.postXML(t, smallPacket(40, 1), "application/x-sap.idoc", "")), 40)

	r := b.postXML(t, smallPacket(41, 100), "application/x-sap.idoc", "")
	p := requireProblem(t, r, http.StatusRequestEntityTooLarge, "payload-too-large")
	require.Contains(t, p["detail"], "more than 40 IDocs")
	require.Contains(t, p["detail"], "MAX_BATCH_MESSAGES")
	require.Equal(t, 40, b.messages(t))

	byDefault := setup(t)
	byDefault.messageType(t, "ORDERS05", nil, nil)
	r = byDefault.postXML(t, smallPacket(1001, 1), "application/x-sap.idoc", "")
	p = requireProblem(t, r, http.StatusRequestEntityTooLarge, "payload-too-large")
	require.Contains(t, p["detail"], "more than 1000 IDocs")
	require.Equal(t, 0, byDefault.messages(t))
}
