package signature

import (
	"net/http"
	"strings"
	"time"
)

// Header names documented at
// https://docs.github.com/en/webhooks/using-webhooks/validating-webhook-deliveries.
const (
	githubSignatureHeader = "X-Hub-Signature-256"
	githubDeliveryHeader  = "X-GitHub-Delivery"
)

// verifyGitHub checks the HMAC of the body alone. GitHub signs no timestamp, so now is unused and
// replays are caught by deduplicating on the delivery id instead.
func verifyGitHub(key []byte, header http.Header, body []byte, _ time.Time) (string, error) {
	value, err := requiredHeader(header, githubSignatureHeader)
	if err != nil {
		return "", err
	}
	mac, err := parseGitHubSignature(value)
	if err != nil {
		return "", err
	}
	if err := matchAny(githubSignatureHeader, sign(key, body), [][]byte{mac}); err != nil {
		return "", err
	}
	return header.Get(githubDeliveryHeader), nil
}

// parseGitHubSignature decodes an X-Hub-Signature-256 value, "sha256=" and a hex HMAC.
func parseGitHubSignature(value string) ([]byte, error) {
	encoded, ok := strings.CutPrefix(value, "sha256=")
	if !ok {
		return nil, verifyError(CheckMalformedHeader, githubSignatureHeader, "the value does not start with sha256=")
	}
	return hexMAC.decodeMAC(githubSignatureHeader, encoded)
}
