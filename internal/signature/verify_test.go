package signature

import (
	"bufio"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// testNow is the injected clock of the scheme tests.
var testNow = time.Unix(1_700_000_000, 0)

func hexString(b []byte) string    { return hex.EncodeToString(b) }
func base64String(b []byte) string { return base64.StdEncoding.EncodeToString(b) }

// testSender signs requests the way a real sender of one scheme does, following the scheme's
// documentation and independently of the package's code.
type testSender struct {
	scheme      Scheme
	secret      string
	otherSecret string // a valid secret that is not the integration's
	body        []byte
	deliveryID  string // the delivery id the sender sends, signed or not
	// signedID is the identity Verify returns: the delivery id where the scheme signs it.
	signedID string
	// signature is the encoded HMAC of body at signedAt under secret, as the header carries it.
	signature func(secret string, body []byte, signedAt time.Time) string
	// headers returns a complete, validly signed set of headers.
	headers         func(secret string, body []byte, signedAt time.Time) http.Header
	signatureHeader string
	timestampHeader string // "" when the scheme signs no timestamp
	required        []string
	malformed       []string // signature header values that must be rejected as malformed
}

const swTestID = "msg_2KWPBgLlAfxdpx2AI54pPJ85f4W"

func swKey(secret string) []byte {
	key, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(secret, "whsec_"))
	if err != nil {
		panic(err)
	}
	return key
}

func unix(t time.Time) string { return strconv.FormatInt(t.Unix(), 10) }

func standardWebhooksSender() testSender {
	s := testSender{
		scheme:      StandardWebhooks,
		secret:      "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw",
		otherSecret: "whsec_" + base64String([]byte("another key of 24 bytes!")),
		body:        []byte(`{"type":"order.created","data":{"id":42}}`),
		deliveryID:  swTestID,
		signedID:    swTestID,
		signature: func(secret string, body []byte, signedAt time.Time) string {
			return base64String(testMAC(swKey(secret), swTestID+"."+unix(signedAt)+"."+string(body)))
		},
		signatureHeader: "webhook-signature",
		timestampHeader: "webhook-timestamp",
		required:        []string{"webhook-id", "webhook-timestamp", "webhook-signature"},
		malformed:       []string{"v1", "v1,not base64", "v1,AAAA", "v1,@@@@ v1,AAAA"},
	}
	s.headers = func(secret string, body []byte, signedAt time.Time) http.Header {
		h := http.Header{}
		h.Set("webhook-id", swTestID)
		h.Set("webhook-timestamp", unix(signedAt))
		h.Set("webhook-signature", "v1,"+s.signature(secret, body, signedAt))
		return h
	}
	return s
}

func githubSender() testSender {
	s := testSender{
		scheme:      GitHub,
		secret:      "It's a Secret to Everybody",
		otherSecret: "It's a Secret to Nobody at all",
		body:        []byte(`{"action":"opened","number":1}`),
		deliveryID:  "72d3162e-cc78-11e3-81ab-4c9367dc0958",
		signature: func(secret string, body []byte, _ time.Time) string {
			return hexString(testMAC([]byte(secret), string(body)))
		},
		signatureHeader: "X-Hub-Signature-256",
		required:        []string{"X-Hub-Signature-256"},
		malformed: []string{
			"757107ea0eb2509fc211221cce984b8a37570b6d7586c22c46f4379c8b043e17",
			"sha1=757107ea0eb2509fc211221cce984b8a37570b6d7586c22c46f4379c8b043e17",
			"sha256=not-hex",
			"sha256=757107ea",
		},
	}
	s.headers = func(secret string, body []byte, signedAt time.Time) http.Header {
		h := http.Header{}
		h.Set("X-Hub-Signature-256", "sha256="+s.signature(secret, body, signedAt))
		h.Set("X-GitHub-Delivery", s.deliveryID)
		return h
	}
	return s
}

func stripeSender() testSender {
	s := testSender{
		scheme:      Stripe,
		secret:      "whsec_test_5WbX5kEWLlfzsGNjH64I8lOOqUB6e8FH",
		otherSecret: "whsec_test_0000000000000000000000000000000",
		body:        []byte(`{"id":"evt_1NG8Du2eZvKYlo2CUI79vXWy","object":"event","data":{"object":{"id":"ch_1"}}}`),
		deliveryID:  "evt_1NG8Du2eZvKYlo2CUI79vXWy",
		signedID:    "evt_1NG8Du2eZvKYlo2CUI79vXWy",
		signature: func(secret string, body []byte, signedAt time.Time) string {
			return hexString(testMAC([]byte(secret), unix(signedAt)+"."+string(body)))
		},
		signatureHeader: "Stripe-Signature",
		timestampHeader: "Stripe-Signature",
		required:        []string{"Stripe-Signature"},
		malformed: []string{
			"v1=" + strings.Repeat("ab", 32),
			"t=,v1=" + strings.Repeat("ab", 32),
			"t=-1,v1=" + strings.Repeat("ab", 32),
			"t=1700000000,t=1700000000,v1=" + strings.Repeat("ab", 32),
			"t=1700000000,v1=xyz",
			"t=1700000000,v1",
			"t=1700000000 v1=" + strings.Repeat("ab", 32),
		},
	}
	s.headers = func(secret string, body []byte, signedAt time.Time) http.Header {
		h := http.Header{}
		// Stripe adds a fake v0 signature to test-mode events; it must be ignored.
		h.Set("Stripe-Signature", "t="+unix(signedAt)+",v1="+s.signature(secret, body, signedAt)+",v0="+strings.Repeat("0", 64))
		return h
	}
	return s
}

func shopifySender() testSender {
	s := testSender{
		scheme:      Shopify,
		secret:      "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",
		otherSecret: "shpss_00000000000000000000000000000000",
		body:        []byte(`{"id":820982911946154508,"email":"jon@example.com"}`),
		deliveryID:  "b54557e4-bdd9-4b37-8a5f-bf7d70bcd043",
		signature: func(secret string, body []byte, _ time.Time) string {
			return base64String(testMAC([]byte(secret), string(body)))
		},
		signatureHeader: "X-Shopify-Hmac-Sha256",
		required:        []string{"X-Shopify-Hmac-Sha256"},
		malformed:       []string{"not base64!", "sha256=" + base64String(make([]byte, 32)), base64String(make([]byte, 20))},
	}
	s.headers = func(secret string, body []byte, signedAt time.Time) http.Header {
		h := http.Header{}
		h.Set("X-Shopify-Hmac-Sha256", s.signature(secret, body, signedAt))
		h.Set("X-Shopify-Webhook-Id", s.deliveryID)
		return h
	}
	return s
}

func testSenders() []testSender {
	return []testSender{standardWebhooksSender(), githubSender(), stripeSender(), shopifySender()}
}

func TestVerifyAcceptsValidSignatures(t *testing.T) {
	t.Parallel()
	for _, s := range testSenders() {
		t.Run(string(s.scheme), func(t *testing.T) {
			t.Parallel()
			require.NoError(t, ValidateSecret(s.scheme, s.secret))
			id, err := Verify(s.scheme, []string{s.secret}, s.headers(s.secret, s.body, testNow), s.body, testNow)
			require.NoError(t, err)
			require.Equal(t, s.signedID, id)
		})
	}
}

// verifyCase is one way a request can fail verification.
type verifyCase struct {
	name       string
	signedAt   time.Time
	signedWith string
	body       []byte // what the receiver got, when the sender signed s.body
	mutate     func(http.Header)
	wantCheck  string
	wantHeader string
}

func rejectionCases(s testSender) []verifyCase {
	cases := []verifyCase{
		{
			name: "tampered body", body: append([]byte(" "), s.body...),
			wantCheck: CheckSignatureMismatch, wantHeader: s.signatureHeader,
		},
		{
			name: "wrong secret", signedWith: s.otherSecret,
			wantCheck: CheckSignatureMismatch, wantHeader: s.signatureHeader,
		},
		{
			name: "oversized signature header",
			mutate: func(h http.Header) {
				h.Set(s.signatureHeader, h.Get(s.signatureHeader)+strings.Repeat("A", maxHeaderBytes))
			},
			wantCheck: CheckMalformedHeader, wantHeader: s.signatureHeader,
		},
	}
	for _, name := range s.required {
		cases = append(cases, verifyCase{
			name:      "missing " + name,
			mutate:    func(h http.Header) { h.Del(name) },
			wantCheck: CheckMissingHeader, wantHeader: name,
		})
	}
	for i, value := range s.malformed {
		cases = append(cases, verifyCase{
			name:      fmt.Sprintf("malformed %d", i),
			mutate:    func(h http.Header) { h.Set(s.signatureHeader, value) },
			wantCheck: CheckMalformedHeader, wantHeader: s.signatureHeader,
		})
	}
	if s.timestampHeader != "" {
		cases = append(cases,
			verifyCase{
				name: "stale timestamp", signedAt: testNow.Add(-DefaultTolerance - time.Minute),
				wantCheck: CheckTimestamp, wantHeader: s.timestampHeader,
			},
			verifyCase{
				name: "future timestamp", signedAt: testNow.Add(DefaultTolerance + time.Minute),
				wantCheck: CheckTimestamp, wantHeader: s.timestampHeader,
			},
		)
	}
	return cases
}

func TestVerifyRejects(t *testing.T) {
	t.Parallel()
	for _, s := range testSenders() {
		for _, tc := range rejectionCases(s) {
			t.Run(string(s.scheme)+"/"+tc.name, func(t *testing.T) {
				t.Parallel()
				signedAt, signedWith, body := testNow, s.secret, s.body
				if !tc.signedAt.IsZero() {
					signedAt = tc.signedAt
				}
				if tc.signedWith != "" {
					signedWith = tc.signedWith
				}
				header := s.headers(signedWith, s.body, signedAt)
				if tc.body != nil {
					body = tc.body
				}
				if tc.mutate != nil {
					tc.mutate(header)
				}
				id, err := Verify(s.scheme, []string{s.secret}, header, body, testNow)
				require.Empty(t, id)
				// The signature the receiver expects must never be disclosed: it would be a valid
				// signature for whatever the sender sent.
				expected := s.signature(s.secret, body, signedAt)
				requireVerifyError(t, err, tc.wantCheck, tc.wantHeader, expected, s.secret)
			})
		}
	}
}

func TestVerifyHeaderNamesAreCaseInsensitive(t *testing.T) {
	t.Parallel()
	s := githubSender()
	raw := "POST /api/webhook/1 HTTP/1.1\r\nHost: example.com\r\n" +
		"x-hub-signature-256: sha256=" + s.signature(s.secret, s.body, testNow) + "\r\n" +
		"X-GITHUB-DELIVERY: " + s.deliveryID + "\r\n" +
		"Content-Length: " + strconv.Itoa(len(s.body)) + "\r\n\r\n" + string(s.body)
	req, err := http.ReadRequest(bufio.NewReader(strings.NewReader(raw)))
	require.NoError(t, err)
	body, err := io.ReadAll(req.Body)
	require.NoError(t, err)
	id, err := Verify(GitHub, []string{s.secret}, req.Header, body, testNow)
	require.NoError(t, err)
	require.Empty(t, id, "GitHub signs no delivery id")
}

// A timestamped scheme takes the integration's tolerance: a signing time
// exactly at its edge, in either direction, verifies; a second past it does
// not. The schemes without a timestamp ignore it.
func TestVerifyWithinTolerance(t *testing.T) {
	t.Parallel()
	const tolerance = 10 * time.Second
	for _, s := range testSenders() {
		for _, offset := range []time.Duration{-tolerance, tolerance, -tolerance - time.Second, tolerance + time.Second} {
			signedAt := testNow.Add(offset)
			_, err := VerifyWithin(s.scheme, []string{s.secret}, s.headers(s.secret, s.body, signedAt), s.body, testNow, tolerance)
			if s.timestampHeader == "" || offset.Abs() <= tolerance {
				require.NoError(t, err, "%s signed %s from now", s.scheme, offset)
				continue
			}
			requireVerifyError(t, err, CheckTimestamp, s.timestampHeader, s.signature(s.secret, s.body, signedAt), s.secret)
			require.ErrorContains(t, err, "10s tolerance", "%s signed %s from now", s.scheme, offset)
		}
	}
}

func TestVerifyWithinRefusesAToleranceOutOfBounds(t *testing.T) {
	t.Parallel()
	s := stripeSender()
	header := s.headers(s.secret, s.body, testNow)
	for _, tolerance := range []time.Duration{0, -time.Second, 1500 * time.Millisecond, MaxTolerance + time.Second} {
		_, err := VerifyWithin(s.scheme, []string{s.secret}, header, s.body, testNow, tolerance)
		var verr *VerifyError
		require.Error(t, err, "%s", tolerance)
		require.NotErrorAs(t, err, &verr, "an integration's misconfiguration, not the sender's failure")
	}
	_, err := VerifyWithin(s.scheme, []string{s.secret}, header, s.body, testNow, MaxTolerance)
	require.NoError(t, err)
}
