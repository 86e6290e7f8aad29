package signature

import (
	"net/http"
	"strings"
	"time"
)

// Header names of the Standard Webhooks specification (https://www.standardwebhooks.com/).
const (
	swIDHeader        = "webhook-id"
	swTimestampHeader = "webhook-timestamp"
	swSignatureHeader = "webhook-signature"
)

// verifyStandardWebhooks checks an HMAC of "id.timestamp.body". The id and the timestamp are both
// signed, so a captured request can neither be replayed late nor passed off as another delivery.
func verifyStandardWebhooks(key []byte, header http.Header, body []byte, now time.Time) (string, error) {
	id, err := requiredHeader(header, swIDHeader)
	if err != nil {
		return "", err
	}
	timestamp, err := requiredHeader(header, swTimestampHeader)
	if err != nil {
		return "", err
	}
	signatures, err := requiredHeader(header, swSignatureHeader)
	if err != nil {
		return "", err
	}
	macs, err := parseStandardWebhooksSignature(signatures)
	if err != nil {
		return "", err
	}
	signedAt, err := parseUnixSeconds(swTimestampHeader, timestamp)
	if err != nil {
		return "", err
	}
	if err := checkTimestamp(swTimestampHeader, signedAt, now); err != nil {
		return "", err
	}
	expected := sign(key, []byte(id), dot, []byte(timestamp), dot, body)
	if err := matchAny(swSignatureHeader, expected, macs); err != nil {
		return "", err
	}
	return id, nil
}

// parseStandardWebhooksSignature returns the v1 signatures of a webhook-signature value, a
// space-separated list of "version,signature" entries. Entries of other versions are skipped so
// that a sender can add a future scheme next to v1, and several v1 entries are kept so that a
// sender can sign with an old and a new key while the secret is being rotated.
func parseStandardWebhooksSignature(value string) ([][]byte, error) {
	var macs [][]byte
	for entry := range strings.FieldsSeq(value) {
		version, encoded, ok := strings.Cut(entry, ",")
		if !ok {
			return nil, verifyError(CheckMalformedHeader, swSignatureHeader, "an entry is not of the form version,signature")
		}
		if version != "v1" {
			continue
		}
		var err error
		if macs, err = base64MAC.appendMAC(swSignatureHeader, macs, encoded); err != nil {
			return nil, err
		}
	}
	return macs, nil
}
