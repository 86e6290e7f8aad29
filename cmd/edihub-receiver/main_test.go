package main

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/lefia/edihub/internal/signature"
)

func TestReceiverChecksSignaturesAndMarksRepeats(t *testing.T) {
	t.Parallel()
	const secret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"
	var out bytes.Buffer
	srv := httptest.NewServer(newReceiver(secret, &out))
	t.Cleanup(srv.Close)
	post := func(id, sig string) int {
		req, err := http.NewRequest(http.MethodPost, srv.URL, strings.NewReader(`{"a":1}`))
		require.NoError(t, err)
		now := time.Now().Unix()
		if sig == "" {
			sig, err = signature.SignStandardWebhooks(secret, id, now, []byte(`{"a":1}`))
			require.NoError(t, err)
		}
		req.Header.Set("webhook-id", id)
		req.Header.Set("webhook-timestamp", strconv.FormatInt(now, 10))
		req.Header.Set("webhook-signature", sig)
		req.Header.Set("Edihub-Message-Type", "ORDERS05")
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		resp.Body.Close()
		return resp.StatusCode
	}
	require.Equal(t, http.StatusOK, post("msg_1_dst_1", ""))
	require.Equal(t, http.StatusOK, post("msg_1_dst_1", ""))
	require.Equal(t, http.StatusUnauthorized, post("msg_2_dst_1", "v1,AAAA"))
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	require.Len(t, lines, 3)
	require.Contains(t, lines[0], "delivery msg_1_dst_1")
	require.Contains(t, lines[0], "type=ORDERS05")
	require.Contains(t, lines[0], "signature ok")
	require.Contains(t, lines[1], "repeat   msg_1_dst_1")
	require.Contains(t, lines[2], "refused msg_2_dst_1")
}
