package server_test

import (
	"net/http"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
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
