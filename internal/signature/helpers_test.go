package signature

import (
	"crypto/hmac"
	"crypto/sha256"
	"errors"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// testMAC computes an HMAC-SHA256 independently of the package's own helper, so that a test
// signature is evidence of the documented scheme rather than of the code under test.
func testMAC(key []byte, message string) []byte {
	mac := hmac.New(sha256.New, key)
	mac.Write([]byte(message))
	return mac.Sum(nil)
}

// requireVerifyError asserts that err is a *VerifyError for check on header and that its text
// leaks none of the given secrets or signatures.
func requireVerifyError(t *testing.T, err error, check, header string, mustNotContain ...string) {
	t.Helper()
	var verr *VerifyError
	require.True(t, errors.As(err, &verr), "want *VerifyError, got %v", err)
	require.Equal(t, check, verr.Check, "error: %v", err)
	require.True(t, strings.EqualFold(header, verr.Header), "want header %s, got %s", header, verr.Header)
	require.Contains(t, err.Error(), check)
	require.Contains(t, err.Error(), verr.Header)
	for _, s := range mustNotContain {
		require.NotContains(t, err.Error(), s)
	}
}
