package server_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/lefia/edihub/internal/config"
	"github.com/lefia/edihub/internal/ingest"
	"github.com/lefia/edihub/internal/pgtest"
)

// smallPacket is an ORDERS05 packet of n IDocs that hold their control
// record only, with the DOCNUMs first, first+1, ….
func smallPacket(n, first int) []byte {
	docnums := make([]int, n)
	for i := range docnums {
		docnums[i] = first + i
	}
	return controlRecordsPacket(docnums)
}

// controlRecordsPacket is an ORDERS05 packet of IDocs that hold their
// control record only, with the DOCNUMs given.
func controlRecordsPacket(docnums []int) []byte {
	var b strings.Builder
	b.WriteString(`<?xml version="1.0" encoding="UTF-8"?><ORDERS05>`)
	for _, docnum := range docnums {
		fmt.Fprintf(&b, `<IDOC BEGIN="1"><EDI_DC40 SEGMENT="1"><DOCNUM>%d</DOCNUM>`+
			`<IDOCTYP>ORDERS05</IDOCTYP></EDI_DC40></IDOC>`, docnum)
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

// advisoryLocksOfWaitingPacket posts packet while the test holds its
// message type's row, which storing a message must wait for (the foreign
// key's check locks it) after taking the advisory locks of its claims; it
// returns how many advisory locks the packet's transaction held while it
// waited, and the packet's answer once the test let it go.
func advisoryLocksOfWaitingPacket(t *testing.T, b *testBundle, packet []byte) (int, response) {
	t.Helper()
	ctx := context.Background()
	tx, err := b.pool.Begin(ctx)
	require.NoError(t, err)
	defer tx.Rollback(ctx) //nolint:errcheck // released once counted
	_, err = tx.Exec(ctx, `SELECT 1 FROM message_types FOR UPDATE`)
	require.NoError(t, err)
	answered := make(chan response, 1)
	go func() { answered <- b.postXML(t, packet, "application/x-sap.idoc", "") }()

	const others = ` FROM pg_locks WHERE pid <> pg_backend_pid()
		AND pid IN (SELECT pid FROM pg_stat_activity WHERE datname = current_database())`
	// Reading a packet of 1,000 IDocs takes well under a second alone, and
	// over ten under the race detector beside the package's other tests.
	require.Eventually(t, func() bool {
		var waiting bool
		require.NoError(t, tx.QueryRow(ctx, `SELECT EXISTS (SELECT 1`+others+` AND NOT granted)`).Scan(&waiting))
		return waiting
	}, time.Minute, 5*time.Millisecond, "the packet waits for the test's lock")
	var locks int
	require.NoError(t, tx.QueryRow(ctx, `SELECT count(*)`+others+` AND locktype = 'advisory'`).Scan(&locks))
	require.NoError(t, tx.Rollback(ctx))
	return locks, <-answered
}

// A packet takes a bounded number of advisory locks whatever its size: one
// lock per IDoc let a packet of 13,000 IDocs fill PostgreSQL's lock table,
// which all the cluster's sessions share ("out of shared memory").
func TestPacketTakesBoundedLocks(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.messageType(t, "ORDERS05", nil, nil)
	locks, r := advisoryLocksOfWaitingPacket(t, b, smallPacket(1000, 1))
	require.Len(t, packetResults(t, r), 1000)
	require.LessOrEqual(t, locks, ingest.MaxClaimLocks)
	require.Equal(t, 1, locks, "the lock of its tenant environment")
}

// The IDoc of 1,449,000 empty elements in 5.8 MB (which cost 270
// MiB to read and was stored) is answered 413, naming the limit, before it
// is read; nothing is stored.
func TestDenseIDocIsRefused(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.messageType(t, "ORDERS05", nil, nil)
	dense := `<ORDERS05><IDOC BEGIN="1"><EDI_DC40 SEGMENT="1"><DOCNUM>1</DOCNUM><IDOCTYP>ORDERS05</IDOCTYP></EDI_DC40>` +
		`<E1 SEGMENT="1">` + strings.Repeat("<a/>", 1_449_000) + `</E1></IDOC></ORDERS05>`
	r := b.postXML(t, []byte(dense), "application/x-sap.idoc", "")
	p := requireProblem(t, r, http.StatusRequestEntityTooLarge, "payload-too-large")
	require.Contains(t, p["detail"], fmt.Sprintf("more than %d elements and attributes", len(dense)/10))
	require.Contains(t, p["detail"], "one for every 10 bytes")
	require.Equal(t, 0, b.messages(t))
}
