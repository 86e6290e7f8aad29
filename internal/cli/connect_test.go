package cli

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/lefia/edihub/internal/config"
	"github.com/lefia/edihub/internal/pgtest"
)

// edihub's sessions run without JIT unless DATABASE_URL asks for it.
func TestConnectTurnsJITOff(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	url := pgtest.URL(t)
	for dsn, want := range map[string]string{url: "off", url + "&jit=on": "on"} {
		pool, err := connect(ctx, config.Config{DatabaseURL: dsn})
		require.NoError(t, err)
		var jit string
		require.NoError(t, pool.QueryRow(ctx, "SHOW jit").Scan(&jit))
		pool.Close()
		require.Equal(t, want, jit, dsn)
	}
}
