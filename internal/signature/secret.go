package signature

import (
	"crypto/ed25519"
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
)

const (
	// standardWebhooksPrefix marks a Standard Webhooks symmetric secret; the base64 HMAC key follows it.
	standardWebhooksPrefix = "whsec_"
	// standardWebhooksPublicPrefix marks a Standard Webhooks ed25519 public key, which verifies the
	// asymmetric v1a signatures; the base64 of the 32-byte key follows it.
	standardWebhooksPublicPrefix = "whpk_"
	// standardWebhooksPrivatePrefix marks the sender's ed25519 private key, which must never be handed
	// to a receiver: it is recognised only to refuse it with a helpful message.
	standardWebhooksPrivatePrefix = "whsk_"
	// generatedKeyBytes is the random key material of a generated secret: 256 bits, the output size
	// of SHA-256, beyond which a longer HMAC key adds no strength.
	generatedKeyBytes = 32
)

// ErrInvalidSecret is wrapped by every error about a secret a scheme cannot use.
var ErrInvalidSecret = errors.New("signature: invalid secret")

// key is what one secret verifies with: an HMAC key, or an ed25519 public key for the asymmetric
// signatures of Standard Webhooks. Exactly one of the two is set.
type key struct {
	hmac   []byte
	public ed25519.PublicKey
}

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
	material := make([]byte, generatedKeyBytes)
	// Since Go 1.24 crypto/rand.Read never returns an error: it crashes the program instead.
	rand.Read(material)
	if scheme == StandardWebhooks {
		return standardWebhooksPrefix + base64.StdEncoding.EncodeToString(material), nil
	}
	return hex.EncodeToString(material), nil
}

// ValidateSecret rejects a secret the scheme cannot use, with a message that says why and never
// repeats the secret. A bearer integration authenticates with an API key, so its secret must be
// empty.
//
// The rules are those of the schemes' reference libraries, no stricter: a Standard Webhooks secret
// is "whsec_" and the base64 of the HMAC key (padded or not, and the prefix may be left out, as the
// libraries allow), or "whpk_" and the base64 of a 32-byte ed25519 public key; any other scheme's
// secret is its text, which must not be empty nor start or end with whitespace.
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
	_, err := parseKey(scheme, secret)
	return err
}

// parseKeys returns the keys of an integration's current secrets. Every secret must be usable: one
// that is not means the integration is misconfigured, which an operator must hear about rather
// than see hidden behind the senders' failures.
func parseKeys(scheme Scheme, secrets []string) ([]key, error) {
	if len(secrets) == 0 {
		return nil, fmt.Errorf("%w: the integration has no current %s secret", ErrInvalidSecret, scheme)
	}
	keys := make([]key, len(secrets))
	for i, secret := range secrets {
		k, err := parseKey(scheme, secret)
		if err != nil {
			return nil, err
		}
		keys[i] = k
	}
	return keys, nil
}

// parseKey returns the key an HMAC scheme derives from secret, or the reason it cannot.
func parseKey(scheme Scheme, secret string) (key, error) {
	if secret == "" {
		return key{}, fmt.Errorf("%w: the %s secret is empty", ErrInvalidSecret, scheme)
	}
	// Surrounding whitespace is almost always a copy-and-paste accident, and since the text (or its
	// decoding) is the key it would make every signature fail with no visible cause.
	if strings.TrimSpace(secret) != secret {
		return key{}, fmt.Errorf("%w: the %s secret has leading or trailing whitespace", ErrInvalidSecret, scheme)
	}
	if scheme != StandardWebhooks {
		return key{hmac: []byte(secret)}, nil
	}
	if encoded, ok := strings.CutPrefix(secret, standardWebhooksPublicPrefix); ok {
		public, err := decodeBase64(encoded)
		if err != nil || len(public) != ed25519.PublicKeySize {
			return key{}, fmt.Errorf("%w: a %s public key must be %q and the base64 of %d bytes",
				ErrInvalidSecret, scheme, standardWebhooksPublicPrefix, ed25519.PublicKeySize)
		}
		return key{public: public}, nil
	}
	if strings.HasPrefix(secret, standardWebhooksPrivatePrefix) {
		return key{}, fmt.Errorf("%w: a %s private key (%q) belongs to the sender alone; configure its public key (%q)",
			ErrInvalidSecret, scheme, standardWebhooksPrivatePrefix, standardWebhooksPublicPrefix)
	}
	// The reference libraries strip the prefix when it is there and decode the rest either way.
	material, err := decodeBase64(strings.TrimPrefix(secret, standardWebhooksPrefix))
	if err != nil {
		return key{}, fmt.Errorf("%w: a %s secret must be standard base64 after %q", ErrInvalidSecret, scheme, standardWebhooksPrefix)
	}
	if len(material) == 0 {
		return key{}, fmt.Errorf("%w: the %s secret holds no key material", ErrInvalidSecret, scheme)
	}
	return key{hmac: material}, nil
}

// decodeBase64 decodes standard base64 with or without its "=" padding, as the Standard Webhooks
// Python library does: some senders print their secrets unpadded.
func decodeBase64(encoded string) ([]byte, error) {
	return base64.RawStdEncoding.DecodeString(strings.TrimRight(encoded, "="))
}
