package signature

import (
	"errors"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// requireMalformedOrNil asserts the contract of every header parser: on any input it either
// succeeds or reports a malformed header, and never panics.
func requireMalformedOrNil(t *testing.T, err error, header string) {
	t.Helper()
	if err == nil {
		return
	}
	var verr *VerifyError
	require.True(t, errors.As(err, &verr), "want *VerifyError, got %v", err)
	require.Equal(t, CheckMalformedHeader, verr.Check)
	require.Equal(t, header, verr.Header)
}

// requireSignatures asserts that a parsed header kept no more entries than allowed and that
// every kept signature has the length its version prescribes.
func requireSignatures(t *testing.T, parsed signatures, lengths map[int][][]byte) {
	t.Helper()
	require.LessOrEqual(t, parsed.entries, maxSignatures)
	require.LessOrEqual(t, parsed.skipped, parsed.entries)
	kept := 0
	for size, sigs := range lengths {
		kept += len(sigs)
		for _, sig := range sigs {
			require.Len(t, sig, size)
		}
	}
	require.Equal(t, parsed.entries-parsed.skipped, kept)
}

func FuzzStandardWebhooksHeader(f *testing.F) {
	for _, seed := range []string{
		"v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=",
		"v1,AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA= v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=",
		"v2,abc v1a,def", "", " ", "v1", ",", "v1,", "v1,,", "\tv1,AAAA\n",
		"v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE= v1,dawfeoifkpqwoekfpqoekf",
		"v1a,tQ9V2XOqn7jL/DQenEFpqIugdBVtiMmER5mhSkXBNwM0mkATuDe6KYYUuxqtaiHeYGb7KaaBRdM5WqyeFiL8Ag==",
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, value string) {
		parsed, err := parseStandardWebhooksSignature(value)
		requireMalformedOrNil(t, err, swSignatureHeader)
		requireSignatures(t, parsed.signatures, map[int][][]byte{32: parsed.macs, 64: parsed.ed25519})
	})
}

func FuzzGitHubHeader(f *testing.F) {
	for _, seed := range []string{
		"sha256=757107ea0eb2509fc211221cce984b8a37570b6d7586c22c46f4379c8b043e17",
		"sha256=", "sha256", "sha1=abc", "", "sha256=zz", "SHA256=757107ea",
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, value string) {
		mac, err := parseGitHubSignature(value)
		requireMalformedOrNil(t, err, githubSignatureHeader)
		if err == nil {
			require.Len(t, mac, 32)
		}
	})
}

func FuzzStripeHeader(f *testing.F) {
	for _, seed := range []string{
		"t=1700000000,v1=" + strings.Repeat("ab", 32) + ",v0=" + strings.Repeat("00", 32),
		"t=1700000000", "v1=abc", "t=1700000000,v1=bad_signature", "t=,v1=", "t=1,t=2", "t=99999999999999999999", "=,=", ",", "", "t=-5",
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, value string) {
		parsed, err := parseStripeSignature(value)
		requireMalformedOrNil(t, err, stripeSignatureHeader)
		if err == nil {
			require.NotEmpty(t, parsed.timestamp)
			requireSignatures(t, parsed.signatures, map[int][][]byte{32: parsed.macs})
		}
	})
}

func FuzzShopifyHeader(f *testing.F) {
	for _, seed := range []string{
		"AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=", "", "=", "not base64", "AAAA",
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, value string) {
		mac, err := parseShopifySignature(value)
		requireMalformedOrNil(t, err, shopifySignatureHeader)
		if err == nil {
			require.Len(t, mac, 32)
		}
	})
}

func FuzzUnixTimestamp(f *testing.F) {
	for _, seed := range []string{"1614265330", "0", "", "+1", "-1", "1e9", " 1", "99999999999999999999", "9223372036854775807"} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, value string) {
		signedAt, err := parseUnixSeconds(swTimestampHeader, value)
		requireMalformedOrNil(t, err, swTimestampHeader)
		if err == nil {
			// A parsed timestamp of any size must compare with the clock without overflowing into
			// an accepted skew.
			tsErr := checkTimestamp(swTimestampHeader, signedAt, testNow, DefaultTolerance)
			if signedAt.Sub(testNow).Abs() > DefaultTolerance {
				require.Error(t, tsErr)
			}
		}
	})
}

// FuzzVerify drives the whole of Verify with hostile header values for every scheme: whatever
// arrives, the answer is a *VerifyError or a delivery id, never a panic or another error.
func FuzzVerify(f *testing.F) {
	f.Add(uint8(0), "msg_1", "1700000000", "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=", []byte(`{"id":"x"}`))
	f.Add(uint8(1), "", "", "sha256=757107ea0eb2509fc211221cce984b8a37570b6d7586c22c46f4379c8b043e17", []byte("Hello, World!"))
	f.Add(uint8(2), "", "", "t=1700000000,v1="+strings.Repeat("ab", 32), []byte(`{"id":"evt_1"}`))
	f.Add(uint8(3), "", "", "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=", []byte(`{}`))
	senders := testSenders()
	f.Fuzz(func(t *testing.T, which uint8, id, timestamp, signature string, body []byte) {
		s := senders[int(which)%len(senders)]
		header := http.Header{}
		header.Set("webhook-id", id)
		header.Set("webhook-timestamp", timestamp)
		header.Set(s.signatureHeader, signature)
		_, err := Verify(s.scheme, []string{s.secret}, header, body, testNow)
		if err != nil {
			var verr *VerifyError
			require.True(t, errors.As(err, &verr), "want *VerifyError, got %v", err)
			require.NotContains(t, err.Error(), s.secret)
		}
	})
}
