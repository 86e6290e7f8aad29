package server_test

import (
	"net/http"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/lefia/edihub/internal/ingest"
)

// raceSize is how many identical requests are sent at once.
const raceSize = 100

// postConcurrently sends the same request raceSize times at once and
// returns every answer.
func postConcurrently(t *testing.T, b *testBundle, body []byte, headers ...string) []response {
	t.Helper()
	return sendConcurrently(raceSize, func() response { return b.post(t, body, headers...) })
}

// sendConcurrently releases n senders at the same moment and returns every
// answer, in sender order.
func sendConcurrently(n int, send func() response) []response {
	responses := make([]response, n)
	start := make(chan struct{})
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			<-start
			responses[i] = send()
		})
	}
	close(start)
	wg.Wait()
	return responses
}

// requireOneStored checks that of many identical requests exactly one stored
// the message and every other one got the duplicate answer, each with its
// audit event.
func requireOneStored(t *testing.T, b *testBundle, responses []response) {
	t.Helper()
	created := 0
	ids := map[any]int{}
	for _, r := range responses {
		require.Contains(t, []int{http.StatusCreated, http.StatusOK}, r.status, "%s", r.body)
		if r.status == http.StatusCreated {
			created++
		} else {
			require.Equal(t, "true", r.header.Get("Idempotent-Replayed"))
		}
		ids[r.json(t)["id"]]++
	}
	require.Equal(t, 1, created, "exactly one request stores the message")
	require.Len(t, ids, 1, "every answer names the same message")
	require.Equal(t, 1, b.messages(t))
	require.Equal(t, len(responses)-1, b.blockedEvents(t))
}

func TestConcurrentIdenticalRequestsByFingerprint(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.messageType(t, "ORDERS05", []string{"*.IDOC.E1EDK01.BELNR"}, nil)
	requireOneStored(t, b, postConcurrently(t, b, envelopeFor(t, "ORDERS05", "orders05.json")))
}

func TestConcurrentIdenticalRequestsByIdempotencyKey(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.messageType(t, "ORDERS05", []string{"*.IDOC.E1EDK01.BELNR"}, nil)
	requireOneStored(t, b, postConcurrently(t, b, envelopeFor(t, "ORDERS05", "orders05.json"), "Idempotency-Key", "race-1"))
}

// When the stored original is outside the window, concurrent copies race
// to take the fingerprint over; still exactly one is stored.
func TestConcurrentTakeoverAfterWindow(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.messageType(t, "ORDERS05", []string{"*.IDOC.E1EDK01.BELNR"}, ptr(1))
	require.Equal(t, http.StatusCreated, b.post(t, envelopeFor(t, "ORDERS05", "orders05.json")).status)
	_, err := b.pool.Exec(t.Context(), `UPDATE messages SET received_at = now() - interval '2 hours'`)
	require.NoError(t, err)

	responses := postConcurrently(t, b, envelopeFor(t, "ORDERS05", "orders05_resent_same_docnum.json"))
	created := 0
	for _, r := range responses {
		require.Contains(t, []int{http.StatusCreated, http.StatusOK}, r.status, "%s", r.body)
		if r.status == http.StatusCreated {
			created++
		}
	}
	require.Equal(t, 1, created)
	require.Equal(t, 2, b.messages(t))
	require.Equal(t, 1, b.count(t, `SELECT count(*) FROM messages WHERE fingerprint IS NOT NULL`))
}

// packetRaceSize is how many copies of a packet are sent at once.
const packetRaceSize = 32

// requirePacketsStoredOnce checks that concurrent packets, holding the
// IDocs docnums between them, were all answered and stored each IDoc once.
func requirePacketsStoredOnce(t *testing.T, b *testBundle, responses []response, docnums ...string) {
	t.Helper()
	idsByDocnum := map[string]map[any]bool{}
	answered := 0
	for _, r := range responses {
		for _, m := range packetResults(t, r) {
			docnum := m["docnum"].(string)
			if idsByDocnum[docnum] == nil {
				idsByDocnum[docnum] = map[any]bool{}
			}
			id := m["id"]
			if m["duplicate"] == true {
				id = m["duplicate_of"]
			}
			idsByDocnum[docnum][id] = true
			answered++
		}
	}
	require.Len(t, idsByDocnum, len(docnums))
	for _, d := range docnums {
		require.Len(t, idsByDocnum[d], 1, "every answer for DOCNUM %s names one message", d)
	}
	require.Equal(t, len(docnums), b.messages(t))
	require.Equal(t, len(docnums), b.count(t, `SELECT count(DISTINCT docnum) FROM messages`))
	require.Equal(t, answered-len(docnums), b.blockedEvents(t), "one event per blocked IDoc")
}

func TestConcurrentIdenticalPackets(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.messageType(t, "ORDERS05", nil, nil)
	packet := readFile(t, "orders05_packet.xml")
	responses := sendConcurrently(packetRaceSize, func() response {
		return b.postXML(t, packet, "application/x-sap.idoc", "")
	})
	requirePacketsStoredOnce(t, b, responses, "0000000000900101", "0000000000900177", "0000000000900178")
}

// Packets that share one IDoc, and packets that hold the same IDocs in
// opposite orders, race without a deadlock or a second copy: each batch
// takes its claims in one global order before it stores anything.
func TestConcurrentOverlappingPackets(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.messageType(t, "ORDERS05", nil, nil)
	idoc := idocOf(t, readFile(t, "orders05.xml"))
	x, y, z := withDocnum(idoc, "X"), withDocnum(idoc, "Y"), withDocnum(idoc, "Z")
	packets := [][]byte{
		packetOf(t, x, y, z),
		packetOf(t, z, y, x),
		packetOf(t, y, x),
		packetOf(t, z, x),
	}
	var sent atomic.Int64
	responses := sendConcurrently(packetRaceSize, func() response {
		return b.postXML(t, packets[sent.Add(1)%int64(len(packets))], "application/xml", "")
	})
	requirePacketsStoredOnce(t, b, responses, "X", "Y", "Z")
}

// Packets too large to lock each IDoc's claim race with small ones that
// do, holding the same IDocs in different orders: each IDoc is stored once.
func TestConcurrentLargeAndSmallPackets(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.messageType(t, "ORDERS05", nil, nil)
	docnums := make([]int, ingest.MaxClaimLocks+22)
	for i := range docnums {
		docnums[i] = i + 1
	}
	backward := slices.Clone(docnums)
	slices.Reverse(backward)
	packets := [][]byte{
		controlRecordsPacket(docnums), controlRecordsPacket(backward),
		controlRecordsPacket([]int{docnums[0], docnums[len(docnums)-1]}), controlRecordsPacket(backward[:10]),
	}
	var sent atomic.Int64
	responses := sendConcurrently(packetRaceSize, func() response {
		return b.postXML(t, packets[sent.Add(1)%int64(len(packets))], "application/x-sap.idoc", "")
	})
	want := make([]string, len(docnums))
	for i, d := range docnums {
		want[i] = strconv.Itoa(d)
	}
	requirePacketsStoredOnce(t, b, responses, want...)
}

// Batches of JSON envelopes with per-item keys in opposite orders race the
// same way.
func TestConcurrentOverlappingKeyedBatches(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.messageType(t, "ORDERS05", nil, nil)
	env := func(docnum string) []byte {
		return []byte(`{"message_type": "ORDERS05", "docnum": "` + docnum + `", "payload": {"n": "` + docnum + `"}}`)
	}
	forward := batchOf(t, [][]byte{env("A"), env("B"), env("C")}, "key-A", "key-B", "key-C")
	backward := batchOf(t, [][]byte{env("C"), env("B"), env("A")}, "key-C", "key-B", "key-A")
	var sent atomic.Int64
	responses := sendConcurrently(packetRaceSize, func() response {
		if sent.Add(1)%2 == 0 {
			return b.postBatch(t, forward)
		}
		return b.postBatch(t, backward)
	})
	requirePacketsStoredOnce(t, b, responses, "A", "B", "C")
}
