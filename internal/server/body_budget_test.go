package server_test

import (
	"bytes"
	"io"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/lefia/edihub/internal/testfactory"
)

// upload is a request to receive-message whose body the test sends piece
// by piece, with the pauses it chooses.
type upload struct {
	w        *io.PipeWriter
	answered chan response
}

// startUpload posts to url with apiKey a body of length bytes (-1: of
// unknown length, sent in chunks) and sends first of it at once.
func startUpload(t *testing.T, url, apiKey string, length int64, first []byte) *upload {
	t.Helper()
	pr, pw := io.Pipe()
	req, err := http.NewRequest(http.MethodPost, url+"/api/edi-hub/receive-message", pr)
	require.NoError(t, err)
	req.ContentLength = length
	req.Header.Set("Authorization", "Bearer "+apiKey)
	req.Header.Set("Content-Type", "application/json")
	u := &upload{w: pw, answered: make(chan response, 1)}
	t.Cleanup(u.abandon)
	go func() {
		resp, err := testClient.Do(req)
		if err != nil {
			u.answered <- response{}
			return
		}
		defer resp.Body.Close()
		raw, _ := io.ReadAll(resp.Body)
		u.answered <- response{status: resp.StatusCode, header: resp.Header, body: raw}
	}()
	if len(first) > 0 {
		_, err = pw.Write(first)
		require.NoError(t, err)
	}
	return u
}

// finish sends the rest of the body.
func (u *upload) finish(t *testing.T, rest []byte) {
	t.Helper()
	_, err := u.w.Write(rest)
	require.NoError(t, err)
	require.NoError(t, u.w.Close())
}

// abandon makes the sender give up half-way.
func (u *upload) abandon() { u.w.CloseWithError(io.ErrUnexpectedEOF) }

// answer waits for the request's answer.
func (u *upload) answer(t *testing.T, within time.Duration) response {
	t.Helper()
	select {
	case r := <-u.answered:
		return r
	case <-time.After(within):
		t.Fatalf("no answer within %s", within)
		return response{}
	}
}

// envelopeOfSize is an envelope of exactly size bytes with docnum.
func envelopeOfSize(docnum string, size int) []byte {
	head := `{"message_type":"ORDERS05","docnum":"` + docnum + `","payload":{"filler":"`
	body := append([]byte(head), bytes.Repeat([]byte("x"), size-len(head)-3)...)
	return append(body, `"}}`...)
}

// Bodies that would take the bytes in process past
// MAX_BODY_BYTES_IN_PROCESS wait unread: a request arriving while the
// bytes of a large one fill the budget goes on only when room is free; the
// budget is returned whatever became of a request, also one whose sender
// paused too long or gave up half-way.
func TestBodiesWaitForRoomInTheBudget(t *testing.T) {
	t.Parallel()
	o := observedServer(t, map[string]string{
		"MAX_BODY_BYTES": "4096", "MAX_BODY_BYTES_IN_PROCESS": "4096", "REQUEST_BODY_IDLE_TIMEOUT": "2s",
	})
	o.messageType(t, "ORDERS05", []string{"docnum"}, nil)
	inProcess := func() float64 { return metricValue(t, o.scrape(), "edihub_request_body_bytes_in_process") }
	waiting := func() float64 { return metricValue(t, o.scrape(), "edihub_request_bodies_waiting") }
	small := func(docnum string) <-chan response {
		answer := make(chan response, 1)
		go func() { answer <- o.post(t, []byte(`{"message_type":"ORDERS05","docnum":"`+docnum+`","payload":{}}`)) }()
		require.Eventually(t, func() bool { return waiting() == 1 }, 5*time.Second, 10*time.Millisecond)
		return answer
	}
	returned := func(msg string) {
		require.Eventually(t, func() bool { return inProcess() == 0 && waiting() == 0 }, 5*time.Second, 10*time.Millisecond, msg)
	}

	// A sender announces 4,096 bytes, the whole budget, and sends all but
	// the last 96, which take the whole budget as they arrive; the rest
	// follows when the test says.
	slowLarge := func(docnum string) (*upload, []byte) {
		body := envelopeOfSize(docnum, 4096)
		u := startUpload(t, o.url, o.apiKey, int64(len(body)), body[:4000])
		require.Eventually(t, func() bool { return inProcess() == 4096 }, 5*time.Second, 10*time.Millisecond)
		return u, body[4000:]
	}

	// A small message waits, unread, until the large one's sender has
	// paused too long and is refused.
	paused, _ := slowLarge("paused")
	waited := small("waited")
	resp := paused.answer(t, 10*time.Second)
	require.Equal(t, http.StatusRequestTimeout, resp.status, "%s", resp.body)
	require.Equal(t, "request-body-timeout", resp.json(t)["type"])
	resp = <-waited
	require.Equal(t, http.StatusCreated, resp.status, "%s", resp.body)
	returned("a request refused for its pause returns its share")

	// Another waits while a large body arrives, then is stored.
	large, rest := slowLarge("large")
	after := small("after")
	large.finish(t, rest)
	require.Equal(t, http.StatusCreated, large.answer(t, 10*time.Second).status)
	require.Equal(t, http.StatusCreated, (<-after).status)
	returned("every share of the budget is returned")

	// A sender gives up half-way.
	gone, _ := slowLarge("gone")
	gone.abandon()
	returned("a request whose sender left returns its share")

	// With room free again, a request does not wait at all.
	resp = o.post(t, []byte(`{"message_type":"ORDERS05","docnum":"free","payload":{}}`))
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
	require.Equal(t, []string{"waited", "large", "after", "free"}, stored, "the requests that were refused stored nothing")
}

// Uploads of unknown length that send nothing, or a byte and then nothing,
// hold none of the budget (a byte holds a few hundred): another tenant's
// small request is stored at once, not after the uploads' time limit, and
// the uploads are refused with 408 once they have paused for
// REQUEST_BODY_IDLE_TIMEOUT.
func TestSilentUploadsDoNotStarveOtherTenants(t *testing.T) {
	t.Parallel()
	o := observedServer(t, map[string]string{
		"MAX_BODY_BYTES": "1048576", "REQUEST_TIMEOUT": "30s", "REQUEST_BODY_IDLE_TIMEOUT": "1s",
	})
	o.messageType(t, "ORDERS05", []string{"docnum"}, nil)
	testfactory.TenantWithEnvironment(t, o.pool, "globex")
	testfactory.MessageType(t, o.pool, &testfactory.MessageTypeOpts{Tenant: "globex", Fields: []string{"docnum"}})
	globex := &testBundle{url: o.url, apiKey: testfactory.APIKey(t, o.pool, &testfactory.APIKeyOpts{Tenant: "globex"})}
	inProcess := func() float64 { return metricValue(t, o.scrape(), "edihub_request_body_bytes_in_process") }
	waiting := func() float64 { return metricValue(t, o.scrape(), "edihub_request_bodies_waiting") }

	silent := []*upload{
		startUpload(t, o.url, o.apiKey, -1, nil),
		startUpload(t, o.url, o.apiKey, -1, nil),
		startUpload(t, o.url, o.apiKey, -1, []byte("{")),
		startUpload(t, o.url, o.apiKey, -1, []byte("{")),
	}
	// Every upload has reached the budget: the two that sent a byte hold
	// the first step of 512 bytes each (had they reserved MAX_BODY_BYTES,
	// as an upload of unknown length once did, two would hold the whole
	// budget and two wait for it).
	require.Eventually(t, func() bool { return inProcess() == 2*512 || waiting() == 2 }, 10*time.Second, 10*time.Millisecond)

	start := time.Now()
	resp := globex.post(t, []byte(`{"message_type":"ORDERS05","docnum":"1","payload":{}}`))
	require.Equal(t, http.StatusCreated, resp.status, "%s", resp.body)
	require.Less(t, time.Since(start), 5*time.Second, "another tenant's small request does not wait for the silent uploads")

	for _, u := range silent {
		r := u.answer(t, 15*time.Second)
		require.Equal(t, http.StatusRequestTimeout, r.status, "%s", r.body)
		require.Equal(t, "request-body-timeout", r.json(t)["type"])
		require.Contains(t, r.json(t)["detail"], "no bytes of the body arrived for 1s")
	}
	require.Eventually(t, func() bool { return inProcess() == 0 && waiting() == 0 }, 5*time.Second, 10*time.Millisecond)
}

// Large bodies take the budget as they arrive, step by step, and yet never
// wait on each other for ever: three bodies of nearly the whole budget,
// each half sent before the others go on, are all stored.
func TestGrowingBodiesAllComplete(t *testing.T) {
	t.Parallel()
	o := observedServer(t, map[string]string{
		"MAX_BODY_BYTES": "65536", "MAX_BODY_BYTES_IN_PROCESS": "65536", "REQUEST_TIMEOUT": "20s",
	})
	o.messageType(t, "ORDERS05", []string{"docnum"}, nil)
	var uploads []*upload
	var rests [][]byte
	for _, docnum := range []string{"a", "b", "c"} {
		body := envelopeOfSize(docnum, 60_000)
		uploads = append(uploads, startUpload(t, o.url, o.apiKey, int64(len(body)), body[:30_000]))
		rests = append(rests, body[30_000:])
	}
	for i, u := range uploads {
		go func() {
			if _, err := u.w.Write(rests[i]); err == nil {
				_ = u.w.Close()
			}
		}()
	}
	for _, u := range uploads {
		r := u.answer(t, 15*time.Second)
		require.Equal(t, http.StatusCreated, r.status, "%s", r.body)
	}
}

// An IDoc-XML body holds seven times its bytes of the budget and an X12 or
// EDIFACT interchange fourteen times, for what reading it costs beside JSON
// and room for the collector; a JSON body holds its bytes. Once its first
// byte has arrived, a body holds its first step (512 bytes of room), seven
// or fourteen times over.
func TestIDocXMLBodiesHoldWhatReadingThemCosts(t *testing.T) {
	t.Parallel()
	o := observedServer(t, map[string]string{"MAX_BODY_BYTES": "4096", "MAX_BODY_BYTES_IN_PROCESS": "16384"})
	inProcess := func() float64 { return metricValue(t, o.scrape(), "edihub_request_body_bytes_in_process") }
	for _, tc := range []struct {
		contentType string
		held        float64
	}{{"application/x-sap.idoc", 7 * 512}, {"application/edi-x12", 14 * 512}, {"application/json", 512}} {
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
			if resp, err := testClient.Do(req); err == nil {
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
