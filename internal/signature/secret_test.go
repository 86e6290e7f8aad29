package signature

import (
	"encoding/base64"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestGenerateSecretRoundTrip(t *testing.T) {
	t.Parallel()
	for _, s := range testSenders() {
		t.Run(string(s.scheme), func(t *testing.T) {
			t.Parallel()
			secret, err := GenerateSecret(s.scheme)
			require.NoError(t, err)
			require.NoError(t, ValidateSecret(s.scheme, secret))
			again, err := GenerateSecret(s.scheme)
			require.NoError(t, err)
			require.NotEqual(t, secret, again)

			id, err := Verify(s.scheme, []string{secret}, s.headers(secret, s.body, testNow), s.body, testNow)
			require.NoError(t, err)
			require.Equal(t, s.signedID, id)
		})
	}
}

func TestGenerateSecretForm(t *testing.T) {
	t.Parallel()
	secret, err := GenerateSecret(StandardWebhooks)
	require.NoError(t, err)
	encoded, ok := strings.CutPrefix(secret, "whsec_")
	require.True(t, ok)
	key, err := base64.StdEncoding.DecodeString(encoded)
	require.NoError(t, err)
	require.Len(t, key, 32)

	for _, scheme := range []Scheme{GitHub, Stripe, Shopify} {
		secret, err := GenerateSecret(scheme)
		require.NoError(t, err)
		require.Regexp(t, `^[0-9a-f]{64}$`, secret)
	}

	_, err = GenerateSecret(Bearer)
	require.ErrorIs(t, err, ErrNotHMAC)
	_, err = GenerateSecret("hmac")
	require.ErrorIs(t, err, ErrUnknownScheme)
}

func TestValidateSecret(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		scheme  Scheme
		secret  string
		wantErr error
		wantMsg string
	}{
		{name: "standard-webhooks vector", scheme: StandardWebhooks, secret: "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"},
		{name: "standard-webhooks without prefix", scheme: StandardWebhooks, secret: "MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"},
		{name: "standard-webhooks unpadded", scheme: StandardWebhooks, secret: "whsec_" + base64.RawStdEncoding.EncodeToString(make([]byte, 32))},
		{name: "standard-webhooks short key", scheme: StandardWebhooks, secret: "whsec_" + base64.StdEncoding.EncodeToString(make([]byte, 15))},
		{name: "standard-webhooks bad base64", scheme: StandardWebhooks, secret: "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLa$w", wantErr: ErrInvalidSecret, wantMsg: "base64"},
		{name: "standard-webhooks url-safe base64", scheme: StandardWebhooks, secret: "whsec_-_-_", wantErr: ErrInvalidSecret, wantMsg: "base64"},
		{name: "standard-webhooks prefix only", scheme: StandardWebhooks, secret: "whsec_", wantErr: ErrInvalidSecret, wantMsg: "no key material"},
		{name: "standard-webhooks public key", scheme: StandardWebhooks, secret: "whpk_" + base64.StdEncoding.EncodeToString(make([]byte, 32))},
		{name: "standard-webhooks short public key", scheme: StandardWebhooks, secret: "whpk_" + base64.StdEncoding.EncodeToString(make([]byte, 31)), wantErr: ErrInvalidSecret, wantMsg: "32 bytes"},
		{name: "standard-webhooks private key", scheme: StandardWebhooks, secret: "whsk_" + base64.StdEncoding.EncodeToString(make([]byte, 32)), wantErr: ErrInvalidSecret, wantMsg: "public key"},
		{name: "standard-webhooks empty", scheme: StandardWebhooks, secret: "", wantErr: ErrInvalidSecret, wantMsg: "empty"},
		{name: "github", scheme: GitHub, secret: "It's a Secret to Everybody"},
		{name: "github empty", scheme: GitHub, secret: "", wantErr: ErrInvalidSecret, wantMsg: "empty"},
		{name: "github short", scheme: GitHub, secret: "hunter2"},
		{name: "stripe whsec used as is", scheme: Stripe, secret: "whsec_test_5WbX5kEWLlfzsGNjH64I8lOOqUB6e8FH"},
		{name: "stripe trailing newline", scheme: Stripe, secret: "whsec_test_5WbX5kEWLlfzsGNjH64I8lOOqUB6e8FH\n", wantErr: ErrInvalidSecret, wantMsg: "whitespace"},
		{name: "shopify library test secret", scheme: Shopify, secret: "test_secret_key"},
		{name: "shopify leading space", scheme: Shopify, secret: " 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", wantErr: ErrInvalidSecret, wantMsg: "whitespace"},
		{name: "bearer without secret", scheme: Bearer, secret: ""},
		{name: "bearer with secret", scheme: Bearer, secret: "It's a Secret to Everybody", wantErr: ErrInvalidSecret, wantMsg: "API key"},
		{name: "unknown scheme", scheme: "hmac", secret: "It's a Secret to Everybody", wantErr: ErrUnknownScheme},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			err := ValidateSecret(tt.scheme, tt.secret)
			if tt.wantErr == nil {
				require.NoError(t, err)
				return
			}
			require.ErrorIs(t, err, tt.wantErr)
			require.ErrorContains(t, err, tt.wantMsg)
			if tt.secret != "" {
				require.NotContains(t, err.Error(), tt.secret)
			}
		})
	}
}
