package delivery

import (
	"context"
	"log/slog"
)

// quietLog passes on River's warnings and errors, and its informational
// lines only when debugging: River tells of every queue it starts and
// stops, and a worker process starts and stops a destination's queue
// whenever the destination gets work or falls idle, which would bury the
// deliveries' own lines in the default log.
type quietLog struct{ slog.Handler }

func (q quietLog) Enabled(ctx context.Context, level slog.Level) bool {
	return q.Handler.Enabled(ctx, level) && (level >= slog.LevelWarn || q.Handler.Enabled(ctx, slog.LevelDebug))
}

func (q quietLog) WithAttrs(attrs []slog.Attr) slog.Handler {
	return quietLog{q.Handler.WithAttrs(attrs)}
}

func (q quietLog) WithGroup(name string) slog.Handler { return quietLog{q.Handler.WithGroup(name)} }
