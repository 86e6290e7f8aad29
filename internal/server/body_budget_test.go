package server_test

import (
	"bytes"
	"io"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// Bodies that would take the bytes in process past
// MAX_BODY_BYTES_IN_PROCESS wait unread: a request arriving while a large
// one holds the budget is answered only when room is free, or at its time
// limit, as a timeout; the budget is returned whatever became of a request.
func TestBodiesWaitForRoomInTheBudget(t *testing.T) {
	t.Parallel()
	o := observedServer(t, map[string]string{
		"MAX_BODY_BYTES": "4096", "MAX_BODY_BYTES_IN_PROCESS": "4096", "REQUEST_TIMEOUT": "2s",
	})
	o.messageType(t, "ORDERS05", []string{"docnum"}, nil)
	inProcess := func() float64 { return metricValue(t, o.scrape(), "edihub_request_body_bytes_in_process") }
	waiting := func() float64 { return metricValue(t, o.scrape(), "edihub_request_bodies_waiting") }
	small := func(docnum string) []byte {
		return []byte(`{"message_type":"ORDERS05","docnum":"` + docnum + `","payload":{}}`)
	}

	// A sender announces 4,096 bytes, the whole budget, and sends the first
	// hundred; the rest follows when the test says.
	slowLarge := func(docnum string) (finish func(), abandon func(), status <-chan int) {
		head := `{"message_type":"ORDERS05","docnum":"` + docnum + `","payload":{"filler":"`
		body := append([]byte(head), bytes.Repeat([]byte("x"), 4096-len(head)-3)...)
		body = append(body, `"}}`...)
		pr, pw := io.Pipe()
		req, err := http.NewRequest(http.MethodPost, o.url+"/api/edi-hub/receive-message", pr)
		require.NoError(t, err)
		req.ContentLength = int64(len(body))
		req.Header.Set("Authorization", "Bearer "+o.apiKey)
		req.Header.Set("Content-Type", "application/json")
		answered := make(chan int, 1)
		go func() {
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				answered <- 0
				return
			}
			resp.Body.Close()
			answered <- resp.StatusCode
		}()
		_, err = pw.Write(body[:100])
		require.NoError(t, err)
		require.Eventually(t, func() bool { return inProcess() == 4096 }, 5*time.Second, 10*time.Millisecond)
		return func() {
			_, err := pw.Write(body[100:])
			require.NoError(t, err)
			require.NoError(t, pw.Close())
		}, func() { pw.CloseWithError(io.ErrUnexpectedEOF) }, answered
	}

	// A small message waits, unread, and runs out of time; then the large
	// one's sender gives up half-way.
	_, abandon, _ := slowLarge("never")
	resp := o.post(t, small("waited"))
	require.Equal(t, http.StatusGatewayTimeout, resp.status, "%s", resp.body)
	require.Equal(t, "request-timeout", resp.json(t)["type"])
	abandon()
	require.Eventually(t, func() bool { return inProcess() == 0 && waiting() == 0 }, 5*time.Second, 10*time.Millisecond,
		"requests that ran out of time or lost their sender return their share")

	// Another waits while a large body arrives, then is stored.
	finish, _, largeStatus := slowLarge("large")
	smallStatus := make(chan int, 1)
	go func() { smallStatus <- o.post(t, small("after")).status }()
	require.Eventually(t, func() bool { return waiting() == 1 }, 5*time.Second, 10*time.Millisecond)
	finish()
	require.Equal(t, http.StatusCreated, <-largeStatus)
	require.Equal(t, http.StatusCreated, <-smallStatus)
	require.Eventually(t, func() bool { return inProcess() == 0 && waiting() == 0 }, 5*time.Second, 10*time.Millisecond,
		"every share of the budget is returned")

	// With room free again, a request does not wait at all.
	resp = o.post(t, small("free"))
	require.Equal(t, http.StatusCreated, resp.status, "%s", resp.body)

	var stored []string
	rows, err := o.pool.Query(t.Context(), `SELECT docnum FROM messages ORDER BY id`)
	require.NoError(t, err)
	for rows.Next() {
		var d string
		require.NoError(t, rows.Scan(&d))
		stored = append(stored, d)
	}
	require.NoError(t, rows.Err())
	require.Equal(t, []string{"large", "after", "free"}, stored, "the requests that timed out stored nothing")
}

// An IDoc-XML body holds three times its size of the budget, for what
// reading it costs beside JSON; a JSON body holds its size.
func TestIDocXMLBodiesHoldWhatReadingThemCosts(t *testing.T) {
	t.Parallel()
	o := observedServer(t, map[string]string{"MAX_BODY_BYTES": "4096", "MAX_BODY_BYTES_IN_PROCESS": "16384"})
	inProcess := func() float64 { return metricValue(t, o.scrape(), "edihub_request_body_bytes_in_process") }
	for _, tc := range []struct {
		contentType string
		held        float64
	}{{"application/x-sap.idoc", 3 * 1000}, {"application/json", 1000}} {
		pr, pw := io.Pipe()
		// The sender gives up whatever the test finds, or the server would
		// wait for the rest of the body until the test's end.
		defer pw.CloseWithError(io.ErrUnexpectedEOF)
		req, err := http.NewRequest(http.MethodPost, o.url+"/api/edi-hub/receive-message", pr)
		require.NoError(t, err)
		req.ContentLength = 1000
		req.Header.Set("Authorization", "Bearer "+o.apiKey)
		req.Header.Set("Content-Type", tc.contentType)
		answered := make(chan struct{})
		go func() {
			if resp, err := http.DefaultClient.Do(req); err == nil {
				resp.Body.Close()
			}
			close(answered)
		}()
		_, err = pw.Write([]byte("<"))
		require.NoError(t, err)
		require.Eventually(t, func() bool { return inProcess() > 0 }, 5*time.Second, 10*time.Millisecond)
		require.Equal(t, tc.held, inProcess(), tc.contentType)
		pw.CloseWithError(io.ErrUnexpectedEOF)
		<-answered
		require.Eventually(t, func() bool { return inProcess() == 0 }, 5*time.Second, 10*time.Millisecond)
	}
}
