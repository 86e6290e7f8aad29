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
		resp, err := srv.Client().Do(req)
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
	require.Contains(t, lines[0], "(signature holds)")
	require.Contains(t, lines[1], "repeat   msg_1_dst_1")
	require.Contains(t, lines[1], "(signature holds)")
	require.Contains(t, lines[2], "refused  msg_2_dst_1 type=ORDERS05")
	require.Contains(t, lines[2], "(signature does not hold: signature: malformed_header check failed on header webhook-signature")
}

// Without a secret every delivery is taken, and each line says that its
// signature was not checked.
func TestReceiverWithoutSecretSaysSo(t *testing.T) {
	t.Parallel()
	var out bytes.Buffer
	srv := httptest.NewServer(newReceiver("", &out))
	t.Cleanup(srv.Close)
	resp, err := srv.Client().Post(srv.URL, "application/json", strings.NewReader(`{"a":1}`))
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	require.Contains(t, out.String(), "(signature not checked)")
}

// The secret comes from -secret or else EDIHUB_RECEIVER_SECRET, and one that
// is not a Standard Webhooks secret stops the receiver at start.
func TestReceiverSecretFromFlagOrEnvironment(t *testing.T) {
	t.Parallel()
	const fromEnv, fromFlag = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw", "whsec_dGhpcyBpcyBhbm90aGVyIHNlY3JldCBrZXk="
	getenv := func(name string) string { return map[string]string{secretVariable: fromEnv}[name] }
	noEnv := func(string) string { return "" }

	addr, secret, err := parseFlags(nil, getenv)
	require.NoError(t, err)
	require.Equal(t, "127.0.0.1:8099", addr)
	require.Equal(t, fromEnv, secret)
	_, secret, err = parseFlags([]string{"-secret", fromFlag, "-addr", ":0"}, getenv)
	require.NoError(t, err)
	require.Equal(t, fromFlag, secret, "the flag wins")
	_, secret, err = parseFlags(nil, noEnv)
	require.NoError(t, err)
	require.Empty(t, secret)
	_, _, err = parseFlags([]string{"-secret", "not-a-whsec-secret"}, noEnv)
	require.ErrorContains(t, err, "whsec_")
}
