package signature

import (
	"crypto/sha256"
	"net/http"
	"strings"
	"time"

	"github.com/tidwall/gjson"
)

// stripeSignatureHeader is documented at https://docs.stripe.com/webhooks#verify-manually.
const stripeSignatureHeader = "Stripe-Signature"

// stripeSignature is a parsed Stripe-Signature value.
type stripeSignature struct {
	// timestamp is the t= value as sent, because the signed content uses its exact text.
	timestamp string
	signedAt  time.Time
	signatures
	macs [][]byte
}

// verifyStripe checks the HMAC of "t.body" and returns the event id from the body. The secret's
// text, "whsec_" prefix included, is the key, as in Stripe's own libraries.
func verifyStripe(keys []key, header http.Header, body []byte, now time.Time, tolerance time.Duration) (string, error) {
	value, err := requiredHeader(header, stripeSignatureHeader)
	if err != nil {
		return "", err
	}
	parsed, err := parseStripeSignature(value)
	if err != nil {
		return "", err
	}
	if err := checkTimestamp(stripeSignatureHeader, parsed.signedAt, now, tolerance); err != nil {
		return "", err
	}
	if !matchHMAC(keys, parsed.macs, []byte(parsed.timestamp), dot, body) {
		return "", parsed.mismatch()
	}
	return stripeEventID(body), nil
}

// parseStripeSignature parses a comma-separated list of key=value items: exactly one t=<unix
// seconds> and any number of v1=<hex HMAC>, several of them while a secret is being rolled.
// Other keys are skipped, as Stripe's libraries skip them: v0 carries a deliberately fake
// signature on test-mode events, and new schemes may appear. A v1 value that is not hex is
// skipped too, as stripe-go skips it; an item that is not key=value spoils the whole header, as
// it does there.
func parseStripeSignature(value string) (stripeSignature, error) {
	parsed := stripeSignature{signatures: signatures{header: stripeSignatureHeader}}
	for item := range strings.SplitSeq(value, ",") {
		key, itemValue, ok := strings.Cut(item, "=")
		if !ok {
			return stripeSignature{}, verifyError(CheckMalformedHeader, stripeSignatureHeader, "an item is not of the form key=value")
		}
		var err error
		switch key {
		case "t":
			if parsed.timestamp != "" {
				return stripeSignature{}, verifyError(CheckMalformedHeader, stripeSignatureHeader, "the header holds more than one t= timestamp")
			}
			parsed.signedAt, err = parseUnixSeconds(stripeSignatureHeader, itemValue)
			parsed.timestamp = itemValue
		case "v1":
			err = parsed.add(&parsed.macs, hexEncoding, sha256.Size, itemValue)
		}
		if err != nil {
			return stripeSignature{}, err
		}
	}
	if parsed.timestamp == "" {
		return stripeSignature{}, verifyError(CheckMalformedHeader, stripeSignatureHeader, "the header holds no t= timestamp")
	}
	return parsed, nil
}

// stripeEventID returns the body's top-level "id", Stripe's event id, which Stripe keeps across
// retries of the same event. It is only called once the signature has been verified, so an
// unauthenticated body is never parsed. A body that is not valid JSON or lacks a string id yields
// "", because a guess would be a wrong idempotency key.
func stripeEventID(body []byte) string {
	if !gjson.ValidBytes(body) {
		return ""
	}
	id := gjson.GetBytes(body, "id")
	if id.Type != gjson.String {
		return ""
	}
	return id.Str
}
