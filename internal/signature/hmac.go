package signature

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"net/http"
	"strconv"
	"strings"
	"time"
)

const (
	// maxHeaderBytes bounds every header value read here. Legitimate values are far shorter, and
	// rejecting longer ones before decoding keeps a hostile sender from making us do needless work.
	maxHeaderBytes = 8 << 10
	// maxSignatures bounds the signatures accepted in one header. Key rotation needs two or three;
	// more than this is a sender trying to make us decode and compare without end.
	maxSignatures = 16
)

// dot separates the parts of the timestamped schemes' signed content.
var dot = []byte(".")

// requiredHeader returns the value of the header name, which the scheme cannot do without.
// http.Header.Get canonicalises name, so the sender's capitalisation does not matter.
func requiredHeader(header http.Header, name string) (string, error) {
	value := header.Get(name)
	if value == "" {
		return "", verifyError(CheckMissingHeader, name, "the request does not carry it")
	}
	if len(value) > maxHeaderBytes {
		return "", verifyError(CheckMalformedHeader, name, "the value is longer than %d bytes", maxHeaderBytes)
	}
	return value, nil
}

// parseUnixSeconds parses a timestamp in whole seconds since the Unix epoch. Only digits are
// accepted, because the raw text is part of the signed content and a sign or spaces would make
// the same instant sign differently.
func parseUnixSeconds(header, value string) (time.Time, error) {
	if value == "" || strings.Trim(value, "0123456789") != "" {
		return time.Time{}, verifyError(CheckMalformedHeader, header, "the timestamp is not a number of Unix seconds")
	}
	seconds, err := strconv.ParseInt(value, 10, 64)
	if err != nil {
		return time.Time{}, verifyError(CheckMalformedHeader, header, "the timestamp is out of range")
	}
	return time.Unix(seconds, 0), nil
}

// checkTimestamp rejects a signing time more than Tolerance away from now in either direction:
// an old one may be a replay, and one in the future would stay replayable for longer.
func checkTimestamp(header string, signedAt, now time.Time) error {
	age := now.Sub(signedAt)
	if age.Abs() <= Tolerance {
		return nil
	}
	direction := "old"
	if age < 0 {
		direction = "in the future"
	}
	return verifyError(CheckTimestamp, header,
		"the timestamp is %s %s, more than the %s tolerance (check the clocks)", age.Abs(), direction, Tolerance)
}

// sign returns the HMAC-SHA256 of the concatenated parts. Writing the parts one by one avoids
// copying a possibly large body just to put a prefix in front of it.
func sign(key []byte, parts ...[]byte) []byte {
	mac := hmac.New(sha256.New, key)
	for _, part := range parts {
		mac.Write(part)
	}
	return mac.Sum(nil)
}

// matchAny succeeds when one of the sender's signatures equals expected. Each comparison takes
// constant time; stopping at the first match reveals only the position of a signature the sender
// already knows. The detail never shows expected, which would be a valid signature for the body.
func matchAny(header string, expected []byte, signatures [][]byte) error {
	if len(signatures) == 0 {
		return verifyError(CheckSignatureMismatch, header, "the header holds no signature in a supported version")
	}
	for _, signature := range signatures {
		if hmac.Equal(expected, signature) {
			return nil
		}
	}
	return verifyError(CheckSignatureMismatch, header,
		"none of the %d signatures matches the body and the integration's secret", len(signatures))
}

// macEncoding is the text encoding a scheme uses for its HMAC-SHA256 values.
type macEncoding struct {
	name   string
	decode func(string) ([]byte, error)
}

var (
	hexMAC    = macEncoding{name: "hex", decode: hex.DecodeString}
	base64MAC = macEncoding{name: "base64", decode: base64.StdEncoding.DecodeString}
)

// decodeMAC decodes one signature and insists on the HMAC-SHA256 length, so that a truncated or
// otherwise mangled value is reported as malformed rather than as a mismatch.
func (e macEncoding) decodeMAC(header, encoded string) ([]byte, error) {
	mac, err := e.decode(encoded)
	if err != nil || len(mac) != sha256.Size {
		return nil, verifyError(CheckMalformedHeader, header, "a signature is not a %s-encoded HMAC-SHA256", e.name)
	}
	return mac, nil
}

// appendMAC decodes one more signature of a header that may list several, refusing more than
// maxSignatures of them.
func (e macEncoding) appendMAC(header string, macs [][]byte, encoded string) ([][]byte, error) {
	if len(macs) == maxSignatures {
		return nil, verifyError(CheckMalformedHeader, header, "the header holds more than %d signatures", maxSignatures)
	}
	mac, err := e.decodeMAC(header, encoded)
	if err != nil {
		return nil, err
	}
	return append(macs, mac), nil
}
