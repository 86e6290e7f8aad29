package signature

import (
	"bytes"
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/base64"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// Header names of the Standard Webhooks specification (https://www.standardwebhooks.com/).
const (
	swIDHeader        = "webhook-id"
	swTimestampHeader = "webhook-timestamp"
	swSignatureHeader = "webhook-signature"
)

// verifyStandardWebhooks checks a signature of "id.timestamp.body": an HMAC-SHA256 (v1) under a
// whsec_ secret or an ed25519 signature (v1a) under a whpk_ public key. The id and the timestamp
// are both signed, so a captured request can neither be replayed late nor passed off as another
// delivery.
func verifyStandardWebhooks(keys []key, header http.Header, body []byte, now time.Time, tolerance time.Duration) (string, error) {
	id, err := requiredHeader(header, swIDHeader)
	if err != nil {
		return "", err
	}
	timestamp, err := requiredHeader(header, swTimestampHeader)
	if err != nil {
		return "", err
	}
	value, err := requiredHeader(header, swSignatureHeader)
	if err != nil {
		return "", err
	}
	parsed, err := parseStandardWebhooksSignature(value)
	if err != nil {
		return "", err
	}
	signedAt, err := parseUnixSeconds(swTimestampHeader, timestamp)
	if err != nil {
		return "", err
	}
	if err := checkTimestamp(swTimestampHeader, signedAt, now, tolerance); err != nil {
		return "", err
	}
	if matchHMAC(keys, parsed.macs, []byte(id), dot, []byte(timestamp), dot, body) ||
		matchEd25519(keys, parsed.ed25519, id, timestamp, body) {
		return id, nil
	}
	return "", parsed.mismatch()
}

// matchEd25519 reports whether one of the sender's v1a signatures verifies under one of the
// public keys. The signed content is assembled only when there is something to verify, since it
// copies the body.
func matchEd25519(keys []key, sigs [][]byte, id, timestamp string, body []byte) bool {
	if len(sigs) == 0 {
		return false
	}
	var content []byte
	for _, k := range keys {
		if k.public == nil {
			continue
		}
		if content == nil {
			content = bytes.Join([][]byte{[]byte(id), []byte(timestamp), body}, dot)
		}
		for _, sig := range sigs {
			if ed25519.Verify(k.public, content, sig) {
				return true
			}
		}
	}
	return false
}

// swSignatures is a parsed webhook-signature value.
type swSignatures struct {
	signatures
	macs    [][]byte // v1: HMAC-SHA256
	ed25519 [][]byte // v1a: ed25519
}

// parseStandardWebhooksSignature returns the v1 and v1a signatures of a webhook-signature value,
// a space-separated list of "version,signature" entries. Entries of other versions, and entries
// that cannot be decoded, are skipped (as the reference libraries skip them) so that a sender can
// add a future scheme or an entry of its own next to a valid signature; several entries of one
// version are kept so that a sender can sign with an old and a new key while rotating its secret.
func parseStandardWebhooksSignature(value string) (swSignatures, error) {
	parsed := swSignatures{signatures: signatures{header: swSignatureHeader}}
	for entry := range strings.FieldsSeq(value) {
		version, encoded, _ := strings.Cut(entry, ",")
		var err error
		switch version {
		case "v1":
			err = parsed.add(&parsed.macs, base64Encoding, sha256.Size, encoded)
		case "v1a":
			err = parsed.add(&parsed.ed25519, base64Encoding, ed25519.SignatureSize, encoded)
		}
		if err != nil {
			return swSignatures{}, err
		}
	}
	return parsed, nil
}

// SignStandardWebhooks returns the webhook-signature value ("v1,<base64>") for a message edihub sends
// itself: the HMAC-SHA256 of "id.timestamp.body" under a whsec_ secret, as verifyStandardWebhooks
// checks it and as receivers using a Standard Webhooks library check it. A public key (whpk_)
// cannot sign.
func SignStandardWebhooks(secret, id string, timestamp int64, body []byte) (string, error) {
	k, err := parseKey(StandardWebhooks, secret)
	if err != nil {
		return "", err
	}
	if k.hmac == nil {
		return "", fmt.Errorf("%w: a %s public key verifies signatures but cannot make them", ErrInvalidSecret, StandardWebhooks)
	}
	mac := sign(k.hmac, []byte(id), dot, strconv.AppendInt(nil, timestamp, 10), dot, body)
	return "v1," + base64.StdEncoding.EncodeToString(mac), nil
}
