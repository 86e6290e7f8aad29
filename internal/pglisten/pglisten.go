// Package pglisten keeps a PostgreSQL LISTEN going for as long as a process
// runs, on a connection of its own, through restarts and failovers of the
// database.
package pglisten

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// maxRetry bounds the wait between attempts to listen again.
const maxRetry = 30 * time.Second

// Handler is told what a Listener hears.
type Handler interface {
	// Listening is called each time the channel is listened to again.
	// Notifications sent while nothing listened were lost, so whatever they
	// would have said must be found out another way now.
	Listening()
	// Notified is called with each notification's payload, in order.
	Notified(payload string)
}

// Listen listens on channel and tells h what it hears until ctx is done.
// It uses a connection outside the pool, so that it takes none from
// requests. While it cannot listen (the database restarts, say), it logs
// with what, saying what the process does meanwhile, and tries again with a
// growing wait.
func Listen(ctx context.Context, pool *pgxpool.Pool, channel string, h Handler, log *slog.Logger, meanwhile string) {
	wait := time.Second
	for {
		listened, err := listen(ctx, pool, channel, h)
		if ctx.Err() != nil {
			return
		}
		if listened {
			wait = time.Second
		}
		log.Warn("not listening on "+channel+"; "+meanwhile, "err", err, "retry_in", wait)
		select {
		case <-ctx.Done():
			return
		case <-time.After(wait):
		}
		wait = min(2*wait, maxRetry)
	}
}

// listen listens until the connection fails or ctx is done; listened says
// whether it got as far as listening.
func listen(ctx context.Context, pool *pgxpool.Pool, channel string, h Handler) (listened bool, err error) {
	conn, err := pgx.ConnectConfig(ctx, pool.Config().ConnConfig.Copy())
	if err != nil {
		return false, fmt.Errorf("connect: %w", err)
	}
	defer func() {
		closeCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer cancel()
		_ = conn.Close(closeCtx)
	}()
	if _, err := conn.Exec(ctx, "LISTEN "+pgx.Identifier{channel}.Sanitize()); err != nil {
		return false, fmt.Errorf("listen: %w", err)
	}
	h.Listening()
	for {
		n, err := conn.WaitForNotification(ctx)
		if err != nil {
			return true, fmt.Errorf("wait for notification: %w", err)
		}
		h.Notified(n.Payload)
	}
}
