package cli

import (
	"math"
	"runtime/debug"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/lefia/edihub/internal/config"
)

// serve sets the collector's target and memory limit, each unless the
// environment sets its own. Not parallel: the settings are the process's.
func TestTuneGCLeavesWhatTheEnvironmentSets(t *testing.T) {
	oldPercent, oldLimit := debug.SetGCPercent(100), debug.SetMemoryLimit(math.MaxInt64)
	t.Cleanup(func() {
		debug.SetGCPercent(oldPercent)
		debug.SetMemoryLimit(oldLimit)
	})
	cfg := config.Config{MaxBodyBytesInProcess: 20 << 20}

	tuneGC(func(string) string { return "" }, cfg)
	require.Equal(t, 400, debug.SetGCPercent(100))
	require.Equal(t, int64(92<<20), debug.SetMemoryLimit(math.MaxInt64), "32 MiB and three times the bodies in process")

	env := map[string]string{"GOGC": "80", "GOMEMLIMIT": "1GiB"}
	tuneGC(func(name string) string { return env[name] }, cfg)
	require.Equal(t, 100, debug.SetGCPercent(100), "GOGC is set: the target is the runtime's")
	require.Equal(t, int64(math.MaxInt64), debug.SetMemoryLimit(math.MaxInt64), "GOMEMLIMIT is set: the limit is the runtime's")
}
