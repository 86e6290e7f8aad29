package server_test

import (
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"
)

// A client whose API keys keep failing is refused with 429 and Retry-After
// before any key is looked up, by its address as TRUSTED_PROXIES names it;
// other addresses, and clients whose keys work, are not held up.
func TestFailedAPIKeysAreThrottledPerAddress(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.messageType(t, "ORDERS05", nil, nil)
	body := []byte(`{"message_type":"ORDERS05","payload":{}}`)
	send := func(key, addr string) response {
		t.Helper()
		h := http.Header{"Authorization": {"Bearer " + key}, "Content-Type": {"application/json"}, "X-Forwarded-For": {addr}}
		return do(t, http.MethodPost, b.url+"/api/edi-hub/receive-message", h, body)
	}

	for range 50 {
		require.Equal(t, http.StatusCreated, send(b.apiKey, "198.51.100.1").status, "valid keys are never counted")
	}
	for range 10 {
		require.Equal(t, http.StatusUnauthorized, send("edh_guess", "203.0.113.9").status)
	}
	resp := send("edh_guess", "203.0.113.9")
	require.Equal(t, http.StatusTooManyRequests, resp.status, "%s", resp.body)
	require.Equal(t, "too-many-attempts", resp.json(t)["type"])
	require.Equal(t, "1", resp.header.Get("Retry-After"))
	require.Equal(t, http.StatusTooManyRequests, send(b.apiKey, "203.0.113.9").status, "the address waits, whatever key it sends")

	// No key at all is a failure too, on every endpoint that takes one.
	noKey := func() int {
		return do(t, http.MethodPost, b.url+"/api/edi-hub/receive-messages",
			http.Header{"Content-Type": {"application/json"}, "X-Forwarded-For": {"2001:db8::7"}}, body).status
	}
	for range 10 {
		require.Equal(t, http.StatusUnauthorized, noKey())
	}
	require.Equal(t, http.StatusTooManyRequests, noKey())

	require.Equal(t, http.StatusUnauthorized, send("edh_guess", "203.0.113.10").status, "another address is not held up")
	require.Equal(t, http.StatusCreated, send(b.apiKey, "198.51.100.1").status)
	require.Equal(t, 51, b.messages(t))
}
