package delivery

import (
	"bytes"
	"log/slog"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestQuietLogKeepsRiversInformationForDebugging(t *testing.T) {
	for _, tc := range []struct {
		level     slog.Level
		want      []string
		wantNever []string
	}{
		{slog.LevelInfo, []string{"a warning", "an error"}, []string{"a queue started", "a detail"}},
		{slog.LevelDebug, []string{"a queue started", "a detail", "a warning", "an error"}, nil},
	} {
		var out bytes.Buffer
		log := slog.New(quietLog{slog.NewTextHandler(&out, &slog.HandlerOptions{Level: tc.level})}).With("component", "river")
		log.Debug("a detail")
		log.Info("a queue started")
		log.Warn("a warning")
		log.Error("an error")
		for _, line := range tc.want {
			require.Contains(t, out.String(), line, tc.level)
		}
		for _, line := range tc.wantNever {
			require.NotContains(t, out.String(), line, tc.level)
		}
		require.Contains(t, out.String(), "component=river", "attributes added later are kept")
	}
}
