package server_test

import (
	"crypto/sha256"
	"fmt"
	"net/http"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/lefia/edihub/internal/edi"
	"github.com/lefia/edihub/internal/idocxml"
	"github.com/lefia/edihub/internal/loadgen"
)

// Packets and interchanges received at once each store their own
// messages' bytes and hashes: the memory a request's views are written to
// is given back when it is answered and reused by the next (viewmem), and
// none may be written over while its request still reads it.
func TestSimultaneousPacketsAndInterchangesKeepTheirOwnViews(t *testing.T) {
	t.Parallel()
	b := setup(t)
	// An interchange numbers its messages from 1 (ST02, UNH 0062); their
	// orders' numbers tell them apart.
	b.messageType(t, "ORDERS05", nil, nil)
	b.messageType(t, "850", []string{"BEG.0.BEG03"}, nil)
	b.messageType(t, "ORDERS", []string{"BGM.0.BGM02"}, nil)
	const requests, perRequest = 24, 20
	want := map[string][32]byte{} // each message's content hash, by its type and bytes
	bodies, contentTypes := make([][]byte, requests), make([]string, requests)
	for i := range requests {
		first := uint64(i*perRequest + 1)
		switch i % 3 {
		case 0:
			bodies[i], contentTypes[i] = loadgen.Packet(perRequest, 2048, first), "application/x-sap.idoc"
			doc, err := idocxml.Parse(bodies[i], "", idocxml.DefaultLimits)
			require.NoError(t, err)
			for _, idoc := range doc.IDocs {
				want["ORDERS05 "+string(doc.Own(bodies[i], idoc))] = sha256.Sum256(idoc.Canonical)
			}
		default:
			form, contentType := loadgen.FormX12, "application/edi-x12"
			if i%3 == 2 {
				form, contentType = loadgen.FormEDIFACT, "application/edifact"
			}
			bodies[i], contentTypes[i] = loadgen.Interchange(form, perRequest, 2048, first, uint64(i+1)), contentType
			ic, err := edi.Parse(bodies[i], edi.DefaultLimits)
			require.NoError(t, err)
			for _, m := range ic.Messages {
				want[m.Code+" "+string(m.Bytes)] = sha256.Sum256(m.Canonical)
			}
		}
	}
	require.Equal(t, requests*perRequest, len(want), "every message of the test has bytes of its own")

	var sent atomic.Int64
	responses := sendConcurrently(requests, func() response {
		i := sent.Add(1) - 1
		return b.postXML(t, bodies[i], contentTypes[i], "")
	})
	for i, r := range responses {
		require.Equal(t, http.StatusOK, r.status, "request %d: %s", i, r.body)
	}

	rows, err := b.pool.Query(t.Context(), `SELECT m.id, t.code, m.received_bytes, m.content_hash
		FROM messages m JOIN message_types t ON t.id = m.message_type_id`)
	require.NoError(t, err)
	defer rows.Close() // a failed check must not keep the connection from the pool's closing
	got := 0
	for rows.Next() {
		var id int64
		var code string
		var bytes, hash []byte
		require.NoError(t, rows.Scan(&id, &code, &bytes, &hash))
		w, ok := want[code+" "+string(bytes)]
		require.True(t, ok, "message %d (%s) holds bytes that no request sent: %.200q", id, code, bytes)
		require.Equal(t, fmt.Sprintf("%x", w), fmt.Sprintf("%x", hash), "the content hash of message %d (%s)", id, code)
		got++
	}
	require.NoError(t, rows.Err())
	require.Equal(t, requests*perRequest, got, "messages stored")
}
