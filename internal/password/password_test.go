package password

import (
	"strings"
	"testing"

	"github.com/alexedwards/argon2id"
	"github.com/stretchr/testify/require"
)

func TestHashAndCheck(t *testing.T) {
	t.Parallel()
	h, err := Hash("correct horse battery staple")
	require.NoError(t, err)
	require.True(t, strings.HasPrefix(h, "$argon2id$v=19$m=65536,t=1,"), "a server hashes at full cost: %s", h)
	require.NotContains(t, h, "correct horse")

	require.NoError(t, Check("correct horse battery staple", h))
	require.ErrorIs(t, Check("correct horse battery stable", h), ErrMismatch)
}

// A low-cost hash, as test suites make, is checked like any other, and a
// full-cost hash still verifies afterwards: the cost travels in the hash.
func TestLowCostHashesCheckTheSame(t *testing.T) {
	full, err := argon2id.CreateHash("correct horse battery staple", argon2id.DefaultParams)
	require.NoError(t, err)
	low, err := argon2id.CreateHash("correct horse battery staple", lowCost)
	require.NoError(t, err)
	require.Contains(t, low, "$m=1024,t=1,p=1$")
	for _, h := range []string{full, low} {
		require.NoError(t, Check("correct horse battery staple", h))
		require.ErrorIs(t, Check("correct horse battery stable", h), ErrMismatch)
	}
}

func TestValidate(t *testing.T) {
	t.Parallel()
	require.ErrorContains(t, Validate("short"), "at least 12")
	require.ErrorContains(t, Validate(strings.Repeat("x", 2000)), "too long")
	require.NoError(t, Validate("twelve chars"))
	_, err := Hash("short")
	require.Error(t, err)
}
