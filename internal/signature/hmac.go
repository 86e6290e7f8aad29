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

// checkTimestamp rejects a signing time more than tolerance away from now in either direction:
// an old one may be a replay, and one in the future would stay replayable for longer.
func checkTimestamp(header string, signedAt, now time.Time, tolerance time.Duration) error {
	age := now.Sub(signedAt)
	if age.Abs() <= tolerance {
		return nil
	}
	direction := "old"
	if age < 0 {
		direction = "in the future"
	}
	return verifyError(CheckTimestamp, header,
		"the timestamp is %s %s, more than the %s tolerance (check the clocks)", age.Abs(), direction, tolerance)
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

// matchHMAC reports whether one of the sender's signatures is the HMAC of the signed parts under
// one of the keys. Each comparison takes constant time; stopping at the first match reveals only
// the position of a signature the sender already knows.
func matchHMAC(keys []key, macs [][]byte, parts ...[]byte) bool {
	if len(macs) == 0 {
		return false
	}
	for _, k := range keys {
		if k.hmac == nil {
			continue
		}
		expected := sign(k.hmac, parts...)
		for _, mac := range macs {
			if hmac.Equal(expected, mac) {
				return true
			}
		}
	}
	return false
}

// signatures collects the decodable signatures of a header that may list several. Entries that
// cannot be decoded are skipped, as the schemes' reference libraries skip them, so that a sender
// that adds an entry of its own next to a valid signature is still accepted; the count of skipped
// entries tells a header that held only garbage from one whose signatures merely do not match.
type signatures struct {
	header  string
	entries int // entries of a supported version, decodable or not
	skipped int
}

// add decodes one entry into *dst, or counts it as skipped when it is not size bytes of the
// encoding. It refuses more than maxSignatures entries, decodable or not.
func (s *signatures) add(dst *[][]byte, enc encoding, size int, encoded string) error {
	if s.entries == maxSignatures {
		return verifyError(CheckMalformedHeader, s.header, "the header holds more than %d signatures", maxSignatures)
	}
	s.entries++
	value, err := enc.decode(encoded)
	if err != nil || len(value) != size {
		s.skipped++
		return nil
	}
	*dst = append(*dst, value)
	return nil
}

// mismatch is the error for a header none of whose signatures verified: malformed when none of
// its entries could even be decoded, a mismatch otherwise. The detail never shows the expected
// signature, which would be a valid signature for the body.
func (s *signatures) mismatch() error {
	switch {
	case s.entries == 0:
		return verifyError(CheckSignatureMismatch, s.header, "the header holds no signature in a supported version")
	case s.skipped == s.entries:
		return verifyError(CheckMalformedHeader, s.header, "no signature in the header can be decoded")
	}
	return verifyError(CheckSignatureMismatch, s.header,
		"none of the %d signatures matches the body and the integration's secrets", s.entries)
}

// encoding is the text encoding a scheme uses for its signatures.
type encoding struct {
	name   string
	decode func(string) ([]byte, error)
}

var (
	hexEncoding    = encoding{name: "hex", decode: hex.DecodeString}
	base64Encoding = encoding{name: "base64", decode: base64.StdEncoding.DecodeString}
)

// decodeMAC decodes the one signature of a single-signature header and insists on the
// HMAC-SHA256 length, so that a truncated or otherwise mangled value is reported as malformed
// rather than as a mismatch.
func (e encoding) decodeMAC(header, encoded string) ([]byte, error) {
	mac, err := e.decode(encoded)
	if err != nil || len(mac) != sha256.Size {
		return nil, verifyError(CheckMalformedHeader, header, "the signature is not a %s-encoded HMAC-SHA256", e.name)
	}
	return mac, nil
}
