package signature

import (
	"encoding/base64"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// swVector is testdata/standard_webhooks_vector.json, a copy of the Standard Webhooks reference
// test vector kept in the package so that the test runs in any clone.
type swVector struct {
	Valid struct {
		Secret  string            `json:"secret"`
		Headers map[string]string `json:"headers"`
		Body    string            `json:"body"`
	} `json:"valid"`
}

func loadSWVector(t *testing.T) swVector {
	t.Helper()
	var v swVector
	readJSON(t, "testdata/standard_webhooks_vector.json", &v)
	return v
}

func (v swVector) header() http.Header {
	h := http.Header{}
	for name, value := range v.Valid.Headers {
		h.Set(name, value)
	}
	return h
}

// signedAt is the vector's timestamp, which lies in 2021: the tests inject it as the clock.
func (v swVector) signedAt(t *testing.T) time.Time {
	t.Helper()
	seconds, err := strconv.ParseInt(v.Valid.Headers["webhook-timestamp"], 10, 64)
	require.NoError(t, err)
	return time.Unix(seconds, 0)
}

func TestStandardWebhooksVector(t *testing.T) {
	t.Parallel()
	v := loadSWVector(t)
	signature := v.Valid.Headers["webhook-signature"]
	_, validMAC, _ := strings.Cut(signature, ",")
	otherMAC := base64.StdEncoding.EncodeToString(make([]byte, 32))

	tests := []struct {
		name      string
		signature string
		now       time.Duration // added to the vector's timestamp
		wantCheck string        // "" when verification must pass
		// wantHeader is the header a failed check must blame.
		wantHeader string
	}{
		{name: "valid", signature: signature},
		{name: "clock slightly ahead", signature: signature, now: 4 * time.Minute},
		{name: "clock slightly behind", signature: signature, now: -4 * time.Minute},
		{name: "six minutes later", signature: signature, now: 6 * time.Minute, wantCheck: CheckTimestamp, wantHeader: swTimestampHeader},
		{name: "six minutes earlier", signature: signature, now: -6 * time.Minute, wantCheck: CheckTimestamp, wantHeader: swTimestampHeader},
		{name: "second of two signatures valid", signature: "v1," + otherMAC + " v1," + validMAC},
		{name: "v1 after an unknown version", signature: "v2," + validMAC + " v1," + validMAC},
		{name: "v2 entry alone", signature: "v2," + validMAC, wantCheck: CheckSignatureMismatch, wantHeader: swSignatureHeader},
		{name: "only a wrong v1", signature: "v1," + otherMAC, wantCheck: CheckSignatureMismatch, wantHeader: swSignatureHeader},
		// An entry without a version is skipped, as the reference libraries skip it, and leaves no signature to match.
		{name: "entry without version", signature: validMAC, wantCheck: CheckSignatureMismatch, wantHeader: swSignatureHeader},
		{name: "signature not base64", signature: "v1,!!!", wantCheck: CheckMalformedHeader, wantHeader: swSignatureHeader},
		{name: "signature truncated", signature: "v1," + base64.StdEncoding.EncodeToString(make([]byte, 31)), wantCheck: CheckMalformedHeader, wantHeader: swSignatureHeader},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			header := v.header()
			header.Set("webhook-signature", tt.signature)
			id, err := Verify(StandardWebhooks, []string{v.Valid.Secret}, header, []byte(v.Valid.Body), v.signedAt(t).Add(tt.now))
			if tt.wantCheck == "" {
				require.NoError(t, err)
				require.Equal(t, v.Valid.Headers["webhook-id"], id)
				return
			}
			requireVerifyError(t, err, tt.wantCheck, tt.wantHeader, validMAC, v.Valid.Secret)
			require.Empty(t, id)
		})
	}
}

func TestStandardWebhooksSignatureLimit(t *testing.T) {
	t.Parallel()
	v := loadSWVector(t)
	_, validMAC, _ := strings.Cut(v.Valid.Headers["webhook-signature"], ",")
	wrong := "v1," + base64.StdEncoding.EncodeToString(make([]byte, 32))

	// Sixteen signatures are accepted, and the last one is still tried.
	header := v.header()
	header.Set("webhook-signature", strings.Repeat(wrong+" ", maxSignatures-1)+"v1,"+validMAC)
	_, err := Verify(StandardWebhooks, []string{v.Valid.Secret}, header, []byte(v.Valid.Body), v.signedAt(t))
	require.NoError(t, err)

	// A seventeenth is refused before any HMAC is computed.
	header.Set("webhook-signature", strings.Repeat(wrong+" ", maxSignatures)+"v1,"+validMAC)
	_, err = Verify(StandardWebhooks, []string{v.Valid.Secret}, header, []byte(v.Valid.Body), v.signedAt(t))
	requireVerifyError(t, err, CheckMalformedHeader, swSignatureHeader)
}

// TestSignStandardWebhooksMatchesTheVector signs the reference vector's content and gets the
// reference signature, so receivers using any Standard Webhooks library accept what edihub sends.
func TestSignStandardWebhooksMatchesTheVector(t *testing.T) {
	t.Parallel()
	v := loadSWVector(t)
	seconds := v.signedAt(t).Unix()
	got, err := SignStandardWebhooks(v.Valid.Secret, v.Valid.Headers["webhook-id"], seconds, []byte(v.Valid.Body))
	require.NoError(t, err)
	require.Equal(t, v.Valid.Headers["webhook-signature"], got)

	_, err = SignStandardWebhooks("not-a-whsec-secret", "id", seconds, nil)
	require.ErrorIs(t, err, ErrInvalidSecret)
}
