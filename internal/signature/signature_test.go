package signature

import (
	"errors"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestParseScheme(t *testing.T) {
	t.Parallel()
	for _, scheme := range Schemes() {
		got, err := ParseScheme(string(scheme))
		require.NoError(t, err)
		require.Equal(t, scheme, got)
	}
	for _, name := range []string{"", "GitHub", " stripe", "hmac", "standard_webhooks"} {
		_, err := ParseScheme(name)
		require.ErrorIs(t, err, ErrUnknownScheme, name)
		require.ErrorContains(t, err, "standard-webhooks, github, stripe, shopify, bearer")
	}
}

func TestSchemesReturnsACopy(t *testing.T) {
	t.Parallel()
	Schemes()[0] = "changed"
	require.Equal(t, StandardWebhooks, Schemes()[0])
}

func TestVerifyRejectsSchemesWithoutHMAC(t *testing.T) {
	t.Parallel()
	tests := []struct {
		scheme Scheme
		want   error
	}{
		{Bearer, ErrNotHMAC},
		{Scheme("hmac"), ErrUnknownScheme},
		{Scheme(""), ErrUnknownScheme},
	}
	for _, tt := range tests {
		t.Run(string(tt.scheme), func(t *testing.T) {
			t.Parallel()
			_, err := Verify(tt.scheme, []string{"a-secret-long-enough-for-anyone"}, http.Header{}, []byte("{}"), time.Now())
			require.ErrorIs(t, err, tt.want)
			var verr *VerifyError
			require.False(t, errors.As(err, &verr), "a configuration error must not look like a sender's failure")
		})
	}
}

func TestVerifyRejectsUnusableSecret(t *testing.T) {
	t.Parallel()
	// An empty key would make every signature forgeable, so Verify must refuse it even if the
	// secret slipped past ValidateSecret.
	body := []byte("Hello, World!")
	header := http.Header{}
	header.Set(githubSignatureHeader, "sha256="+hexString(testMAC(nil, string(body))))
	_, err := Verify(GitHub, []string{""}, header, body, time.Now())
	require.ErrorIs(t, err, ErrInvalidSecret)
}

func TestVerifyErrorText(t *testing.T) {
	t.Parallel()
	err := error(&VerifyError{Check: CheckSignatureMismatch, Header: "Stripe-Signature", Detail: "no match"})
	require.EqualError(t, err, "signature: signature_mismatch check failed on header Stripe-Signature: no match")
}
