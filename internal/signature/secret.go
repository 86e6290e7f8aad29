package signature

import (
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
)

const (
	// standardWebhooksPrefix marks a Standard Webhooks secret; the base64 key material follows it.
	standardWebhooksPrefix = "whsec_"
	// generatedKeyBytes is the random key material of a generated secret: 256 bits, the output size
	// of SHA-256, beyond which a longer HMAC key adds no strength.
	generatedKeyBytes = 32
	// minKeyBytes is the least key material accepted, 128 bits, so that a secret cannot be guessed.
	minKeyBytes = 16
)

// ErrInvalidSecret is wrapped by every error about a secret a scheme cannot use.
var ErrInvalidSecret = errors.New("signature: invalid secret")

// GenerateSecret returns a new random secret in the form the scheme's senders expect. A
// standard-webhooks secret is "whsec_" followed by the standard base64 of 32 random bytes, within
// the 24 to 64 bytes the specification recommends. The other schemes use the secret's text itself as the key, so they get
// the 64-character lowercase hex of 32 random bytes: hex survives copying into sender consoles,
// shells, URLs and YAML without escaping, which base64's "+", "/" and "=" do not always do. Stripe
// and Shopify normally issue the secret themselves; a generated one serves senders that follow
// their scheme but let the receiver choose the secret. Bearer has no secret and returns ErrNotHMAC.
func GenerateSecret(scheme Scheme) (string, error) {
	if err := requireHMAC(scheme); err != nil {
		return "", err
	}
	key := make([]byte, generatedKeyBytes)
	// Since Go 1.24 crypto/rand.Read never returns an error: it crashes the program instead.
	rand.Read(key)
	if scheme == StandardWebhooks {
		return standardWebhooksPrefix + base64.StdEncoding.EncodeToString(key), nil
	}
	return hex.EncodeToString(key), nil
}

// ValidateSecret rejects a secret the scheme cannot use, with a message that says why and never
// repeats the secret. A bearer integration authenticates with an API key, so its secret must be
// empty.
func ValidateSecret(scheme Scheme, secret string) error {
	if scheme == Bearer {
		if secret != "" {
			return fmt.Errorf("%w: bearer integrations authenticate with an API key and take no secret", ErrInvalidSecret)
		}
		return nil
	}
	if err := requireHMAC(scheme); err != nil {
		return err
	}
	_, err := hmacKey(scheme, secret)
	return err
}

// hmacKey returns the HMAC key an HMAC scheme derives from secret, or the reason it cannot.
func hmacKey(scheme Scheme, secret string) ([]byte, error) {
	if secret == "" {
		return nil, fmt.Errorf("%w: the %s secret is empty", ErrInvalidSecret, scheme)
	}
	var key []byte
	if scheme == StandardWebhooks {
		encoded, ok := strings.CutPrefix(secret, standardWebhooksPrefix)
		if !ok {
			return nil, fmt.Errorf("%w: a %s secret must start with %q", ErrInvalidSecret, scheme, standardWebhooksPrefix)
		}
		var err error
		if key, err = base64.StdEncoding.DecodeString(encoded); err != nil {
			return nil, fmt.Errorf("%w: a %s secret must be standard base64 after %q", ErrInvalidSecret, scheme, standardWebhooksPrefix)
		}
	} else {
		// Surrounding whitespace is almost always a copy-and-paste accident, and since the text is
		// the key it would make every signature fail with no visible cause.
		if strings.TrimSpace(secret) != secret {
			return nil, fmt.Errorf("%w: the %s secret has leading or trailing whitespace", ErrInvalidSecret, scheme)
		}
		key = []byte(secret)
	}
	if len(key) < minKeyBytes {
		return nil, fmt.Errorf("%w: the %s secret has %d bytes of key material; at least %d are needed",
			ErrInvalidSecret, scheme, len(key), minKeyBytes)
	}
	return key, nil
}
