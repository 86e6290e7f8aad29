package sender

import (
	"context"
	"log/slog"
	"strconv"

	"github.com/lefia/edihub/internal/pglisten"
)

// changeChannel is where the triggers of migration 020 announce that a
// tenant's API keys or message types changed; the payload is the tenant's
// id, or empty for every tenant.
const changeChannel = "edihub_senders"

// Listen forgets cached lookups as changes to keys and types commit,
// wherever they were made, until ctx is done. While it cannot listen,
// cached lookups still expire after the cache's TTL: that is the bound on
// staleness when notifications fail.
func (s *Service) Listen(ctx context.Context, log *slog.Logger) {
	if s.callers == nil {
		return
	}
	pglisten.Listen(ctx, s.pool, changeChannel, cacheForgetter{s.callers}, log,
		"api key cache: cached keys and types expire after API_KEY_CACHE_TTL meanwhile")
}

// cacheForgetter forgets the lookups a notification says are out of date.
type cacheForgetter struct{ callers *callerCache }

// Listening forgets everything: changes that committed while nothing
// listened were announced to no one.
func (f cacheForgetter) Listening() { f.callers.forgetAll() }

func (f cacheForgetter) Notified(payload string) {
	if tenantID, err := strconv.ParseInt(payload, 10, 64); err == nil {
		f.callers.forgetTenant(tenantID)
	} else {
		f.callers.forgetAll()
	}
}
