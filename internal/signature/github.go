package signature

import (
	"net/http"
	"strings"
	"time"
)

// githubSignatureHeader is documented at
// https://docs.github.com/en/webhooks/using-webhooks/validating-webhook-deliveries.
const githubSignatureHeader = "X-Hub-Signature-256"

// verifyGitHub checks the HMAC of the body alone (see verifyBodyHMAC).
func verifyGitHub(keys []key, header http.Header, body []byte, _ time.Time, _ time.Duration) (string, error) {
	return verifyBodyHMAC(keys, header, body, githubSignatureHeader, parseGitHubSignature)
}

// parseGitHubSignature decodes an X-Hub-Signature-256 value, "sha256=" and a hex HMAC.
func parseGitHubSignature(value string) ([]byte, error) {
	encoded, ok := strings.CutPrefix(value, "sha256=")
	if !ok {
		return nil, verifyError(CheckMalformedHeader, githubSignatureHeader, "the value does not start with sha256=")
	}
	return hexEncoding.decodeMAC(githubSignatureHeader, encoded)
}

// verifyBodyHMAC checks a scheme that signs the body alone, as GitHub and
// Shopify do: one HMAC in one header. Such schemes sign neither a timestamp
// nor their delivery id (X-GitHub-Delivery, X-Shopify-Webhook-Id), which
// anyone replaying a captured delivery may change at will, so they yield no
// signed identity: the body itself is all that is signed.
func verifyBodyHMAC(keys []key, header http.Header, body []byte,
	signatureHeader string, parse func(string) ([]byte, error)) (string, error) {
	value, err := requiredHeader(header, signatureHeader)
	if err != nil {
		return "", err
	}
	mac, err := parse(value)
	if err != nil {
		return "", err
	}
	if !matchHMAC(keys, [][]byte{mac}, body) {
		return "", verifyError(CheckSignatureMismatch, signatureHeader, "the signature does not match the body and the integration's secrets")
	}
	return "", nil
}
