// Package signature verifies webhook senders' signatures over the raw request body, one scheme per
// integration.
//
// Every scheme signs the exact bytes the sender transmitted (with an HMAC-SHA256, or for Standard
// Webhooks' asymmetric variant with ed25519), so Verify must run on the raw body before anything
// parses it. An integration may hold several current secrets while its sender rotates; a request
// signed under any of them is accepted. A failed check is reported as a *VerifyError, whose Check
// field is stable enough to log, count and show to admins; any other error means the integration
// itself is misconfigured (unknown scheme, bearer scheme, unusable secret) rather than that the
// sender failed.
package signature

import (
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"
)

// Scheme names how an integration's sender authenticates its webhooks. The values are stored in the
// integrations table, whose CHECK constraint lists the same names.
type Scheme string

// The supported schemes.
const (
	StandardWebhooks Scheme = "standard-webhooks"
	GitHub           Scheme = "github"
	Stripe           Scheme = "stripe"
	Shopify          Scheme = "shopify"
	Bearer           Scheme = "bearer" // verified by the server's API-key check, not here
)

// schemes keeps the valid names in the order error messages and forms should list them.
var schemes = []Scheme{StandardWebhooks, GitHub, Stripe, Shopify, Bearer}

// DefaultTolerance is the allowed clock skew for timestamped schemes (5 minutes, SPEC.md) unless
// an integration sets its own.
const DefaultTolerance = 5 * time.Minute

// MinTolerance and MaxTolerance bound an integration's tolerance: stripe-go's own test sets 10
// seconds, and past an hour a captured delivery stays replayable for longer than any clock is off.
const (
	MinTolerance = time.Second
	MaxTolerance = time.Hour
)

// ValidTolerance reports whether d may be an integration's tolerance: whole seconds from
// MinTolerance to MaxTolerance.
func ValidTolerance(d time.Duration) bool {
	return d >= MinTolerance && d <= MaxTolerance && d%time.Second == 0
}

// ErrUnknownScheme is wrapped by every error about a scheme name this package does not know.
var ErrUnknownScheme = errors.New("signature: unknown scheme")

// ErrNotHMAC is returned when an HMAC operation is asked of the bearer scheme, whose requests carry
// an API key that the server checks instead of a signature.
var ErrNotHMAC = errors.New("signature: bearer is not an HMAC scheme; the server's API-key check verifies it")

// Timestamped reports whether the scheme signs the time of sending, which Verify checks against a
// tolerance; GitHub and Shopify sign none, and bearer nothing at all.
func (s Scheme) Timestamped() bool { return s == StandardWebhooks || s == Stripe }

// Schemes returns every valid scheme, for example to offer them in a form.
func Schemes() []Scheme {
	return slices.Clone(schemes)
}

// ParseScheme returns the scheme named s. Names are matched exactly because they are stored and
// compared as written.
func ParseScheme(s string) (Scheme, error) {
	if slices.Contains(schemes, Scheme(s)) {
		return Scheme(s), nil
	}
	return "", unknownScheme(s)
}

func unknownScheme(s string) error {
	names := make([]string, len(schemes))
	for i, scheme := range schemes {
		names[i] = string(scheme)
	}
	return fmt.Errorf("%w %q (valid schemes: %s)", ErrUnknownScheme, s, strings.Join(names, ", "))
}

// verifier checks one scheme's headers against body with the integration's already parsed keys;
// a timestamped scheme accepts a signing time within tolerance of now.
type verifier func(keys []key, header http.Header, body []byte, now time.Time, tolerance time.Duration) (signedID string, err error)

// verifiers holds the HMAC schemes. Bearer is deliberately absent: it has no signature to check.
var verifiers = map[Scheme]verifier{
	StandardWebhooks: verifyStandardWebhooks,
	GitHub:           verifyGitHub,
	Stripe:           verifyStripe,
	Shopify:          verifyShopify,
}

// requireHMAC returns nil for the schemes that sign with an HMAC, and otherwise the error that
// explains why the scheme cannot be used for signing.
func requireHMAC(scheme Scheme) error {
	if _, ok := verifiers[scheme]; ok {
		return nil
	}
	if scheme == Bearer {
		return ErrNotHMAC
	}
	return unknownScheme(string(scheme))
}

// Verify checks the request's signature over body with the integration's current secrets at time
// now and returns the delivery's signed identity: the delivery id the signature covers (Standard
// Webhooks' webhook-id, the Stripe event's id), or "" when the scheme signs none (GitHub and
// Shopify send theirs in headers the signature does not cover). A signature under any one of the
// secrets is enough. For Bearer it returns an error: bearer
// is not an HMAC scheme.
//
// A sender's failure is a *VerifyError. The secrets are validated on every call, as ValidateSecret
// does, because an empty key would let anyone forge a signature. The timestamped schemes accept a
// signing time within DefaultTolerance of now.
func Verify(scheme Scheme, secrets []string, header http.Header, body []byte, now time.Time) (signedID string, err error) {
	return VerifyWithin(scheme, secrets, header, body, now, DefaultTolerance)
}

// VerifyWithin is Verify with the integration's own tolerance for the timestamped schemes
// (Standard Webhooks, Stripe); GitHub and Shopify sign no time.
func VerifyWithin(scheme Scheme, secrets []string, header http.Header, body []byte, now time.Time, tolerance time.Duration) (signedID string, err error) {
	if err := requireHMAC(scheme); err != nil {
		return "", err
	}
	if !ValidTolerance(tolerance) {
		return "", fmt.Errorf("signature: tolerance %s is not whole seconds from %s to %s", tolerance, MinTolerance, MaxTolerance)
	}
	keys, err := parseKeys(scheme, secrets)
	if err != nil {
		return "", err
	}
	return verifiers[scheme](keys, header, body, now, tolerance)
}
