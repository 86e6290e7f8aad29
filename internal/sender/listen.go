package sender

import (
	"context"
	"fmt"
	"log/slog"
	"strconv"
	"time"

	"github.com/jackc/pgx/v5"
)

// changeChannel is where the triggers of migration 020 announce that a
// tenant's API keys or message types changed; the payload is the tenant's
// id, or empty for every tenant.
const changeChannel = "edihub_senders"

// maxListenRetry bounds the wait between attempts to listen again.
const maxListenRetry = 30 * time.Second

// Listen forgets cached lookups as changes to keys and types commit,
// wherever they were made, until ctx is done. It listens on a connection
// of its own, outside the pool, so that it takes no connection from
// requests. While it cannot listen (the database restarts, say), it logs
// and tries again, and cached lookups still expire after the cache's TTL:
// that is the bound on staleness when notifications fail.
func (s *Service) Listen(ctx context.Context, log *slog.Logger) {
	if s.callers == nil {
		return
	}
	wait := time.Second
	for {
		listened, err := s.listen(ctx)
		if ctx.Err() != nil {
			return
		}
		if listened {
			wait = time.Second
		}
		log.Warn("api key cache: not listening for changes; cached keys and types expire after API_KEY_CACHE_TTL meanwhile",
			"err", err, "retry_in", wait)
		select {
		case <-ctx.Done():
			return
		case <-time.After(wait):
		}
		wait = min(2*wait, maxListenRetry)
	}
}

// listen listens until the connection fails or ctx is done; listened says
// whether it got as far as listening.
func (s *Service) listen(ctx context.Context) (listened bool, err error) {
	conn, err := pgx.ConnectConfig(ctx, s.pool.Config().ConnConfig.Copy())
	if err != nil {
		return false, fmt.Errorf("connect: %w", err)
	}
	defer func() {
		closeCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer cancel()
		_ = conn.Close(closeCtx)
	}()
	if _, err := conn.Exec(ctx, "LISTEN "+changeChannel); err != nil {
		return false, fmt.Errorf("listen: %w", err)
	}
	// Changes that committed while nothing listened were announced to
	// no one: what was cached before this moment may be out of date.
	s.callers.forgetAll()
	for {
		n, err := conn.WaitForNotification(ctx)
		if err != nil {
			return true, fmt.Errorf("wait for notification: %w", err)
		}
		if tenantID, err := strconv.ParseInt(n.Payload, 10, 64); err == nil {
			s.callers.forgetTenant(tenantID)
		} else {
			s.callers.forgetAll()
		}
	}
}
