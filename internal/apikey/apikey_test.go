package apikey

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestGenerate(t *testing.T) {
	t.Parallel()
	a, err := Generate()
	require.NoError(t, err)
	b, err := Generate()
	require.NoError(t, err)

	require.NotEqual(t, a.Secret, b.Secret)
	require.True(t, strings.HasPrefix(a.Secret, "edh_"))
	require.Len(t, a.Secret, 4+43)
	require.Equal(t, Hash(a.Secret), a.Hash)
	require.True(t, strings.HasPrefix(a.Secret, a.Prefix))
	require.NotContains(t, string(a.Hash[:]), a.Secret)
}
