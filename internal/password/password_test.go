package password

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestHashAndCheck(t *testing.T) {
	t.Parallel()
	h, err := Hash("correct horse battery staple")
	require.NoError(t, err)
	require.True(t, strings.HasPrefix(h, "$argon2id$"))
	require.NotContains(t, h, "correct horse")

	require.NoError(t, Check("correct horse battery staple", h))
	require.ErrorIs(t, Check("correct horse battery stable", h), ErrMismatch)
}

func TestValidate(t *testing.T) {
	t.Parallel()
	require.ErrorContains(t, Validate("short"), "at least 12")
	require.ErrorContains(t, Validate(strings.Repeat("x", 2000)), "too long")
	require.NoError(t, Validate("twelve chars"))
	_, err := Hash("short")
	require.Error(t, err)
}
