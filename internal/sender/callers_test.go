package sender_test

import (
	"context"
	"crypto/rand"
	"errors"
	"io"
	"log/slog"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"

	"github.com/lefia/edihub/internal/apperr"
	"github.com/lefia/edihub/internal/db"
	"github.com/lefia/edihub/internal/pgtest"
	"github.com/lefia/edihub/internal/provision"
	"github.com/lefia/edihub/internal/sender"
	"github.com/lefia/edihub/internal/testfactory"
)

// cacheBundle is a tenant with one message type and one API key, and a
// Service caching lookups for an hour on a clock the test moves.
type cacheBundle struct {
	pool    *pgxpool.Pool
	senders *sender.Service
	key     string
	typ     db.MessageType
	clock   *fakeClock
}

type fakeClock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *fakeClock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

const testTTL = time.Hour

func setupCache(t *testing.T) *cacheBundle {
	t.Helper()
	pool := pgtest.Pool(t)
	testfactory.TenantWithEnvironment(t, pool, "acme")
	b := &cacheBundle{
		pool: pool, senders: sender.New(pool, testTTL),
		typ:   testfactory.MessageType(t, pool, nil),
		key:   testfactory.APIKey(t, pool, nil),
		clock: &fakeClock{now: time.Now()},
	}
	b.senders.SetClock(b.clock.Now)
	return b
}

func (b *cacheBundle) exec(t *testing.T, sql string, args ...any) {
	t.Helper()
	_, err := b.pool.Exec(context.Background(), sql, args...)
	require.NoError(t, err)
}

// window is the window of the bundle's type as a lookup of key now says.
func (b *cacheBundle) window(t *testing.T) *int32 {
	t.Helper()
	ctx := context.Background()
	who, err := b.senders.APIKeyWithTypes(ctx, b.key)
	require.NoError(t, err)
	mt, err := who.MessageType(ctx, b.typ.Code)
	require.NoError(t, err)
	return mt.DuplicateWindowHours
}

// A key revoked by another process (the CLI, another replica: here SQL)
// works from the cache until the TTL has passed since its lookup, and not
// a moment longer.
func TestCachedKeyIsRefusedOnceTheTTLPassed(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	b := setupCache(t)
	_, err := b.senders.APIKeyWithTypes(ctx, b.key)
	require.NoError(t, err)
	b.exec(t, `UPDATE api_keys SET revoked_at = now()`)

	b.clock.Advance(testTTL - time.Millisecond)
	_, err = b.senders.APIKeyWithTypes(ctx, b.key)
	require.NoError(t, err, "within the TTL the cached lookup answers")
	_, err = b.senders.APIKey(ctx, b.key)
	require.NoError(t, err, "bearer webhooks read the same cache")

	b.clock.Advance(time.Millisecond)
	_, err = b.senders.APIKeyWithTypes(ctx, b.key)
	require.ErrorIs(t, err, sender.ErrBadAPIKey, "at the TTL the key is looked up again")
	_, err = b.senders.APIKey(ctx, b.key)
	require.ErrorIs(t, err, sender.ErrBadAPIKey)
	require.Zero(t, b.senders.CachedKeys(), "a refused key is not kept")
}

// With a TTL of 0 there is no cache: a change anywhere applies to the next
// request, exactly as before the cache existed.
func TestNoCacheReadsEveryRequest(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	b := setupCache(t)
	senders := sender.New(b.pool, 0)
	_, err := senders.APIKeyWithTypes(ctx, b.key)
	require.NoError(t, err)
	b.exec(t, `UPDATE message_types SET duplicate_window_hours = 7`)
	who, err := senders.APIKeyWithTypes(ctx, b.key)
	require.NoError(t, err)
	mt, err := who.MessageType(ctx, b.typ.Code)
	require.NoError(t, err)
	require.Equal(t, int32(7), *mt.DuplicateWindowHours)
	b.exec(t, `UPDATE api_keys SET revoked_at = now()`)
	_, err = senders.APIKeyWithTypes(ctx, b.key)
	require.ErrorIs(t, err, sender.ErrBadAPIKey)
	_, err = senders.APIKey(ctx, b.key)
	require.ErrorIs(t, err, sender.ErrBadAPIKey)
}

// A rotated key's entry ends when its grace period does, whatever the TTL.
func TestCachedKeyEndsWithItsGracePeriod(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool := pgtest.Pool(t)
	testfactory.TenantWithEnvironment(t, pool, "acme")
	key := testfactory.APIKey(t, pool, nil)
	senders := sender.New(pool, testTTL) // the real clock: the database judges revoked_at by its own
	_, err := pool.Exec(ctx, `UPDATE api_keys SET revoked_at = now() + interval '1 second'`)
	require.NoError(t, err)
	_, err = senders.APIKeyWithTypes(ctx, key)
	require.NoError(t, err, "in its grace period the key works")
	require.Equal(t, 1, senders.CachedKeys())
	require.Eventually(t, func() bool {
		_, err := senders.APIKeyWithTypes(ctx, key)
		return err != nil
	}, 5*time.Second, 20*time.Millisecond, "the key stops when its grace period ends, not after the TTL")
	_, err = senders.APIKeyWithTypes(ctx, key)
	require.ErrorIs(t, err, sender.ErrBadAPIKey)
}

// ForgetTenant, which this process's own changes call, applies them to
// the next lookup of that tenant's keys; a type created elsewhere is found
// without it, by one more lookup past the cache.
func TestForgetTenantAppliesChangesAtOnceAndNewTypesAreFound(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	b := setupCache(t)
	require.Nil(t, b.window(t))
	b.exec(t, `UPDATE message_types SET duplicate_window_hours = 3`)
	require.Nil(t, b.window(t), "without notice the cached type stays until the TTL")
	b.senders.ForgetTenant(b.typ.TenantID + 1)
	require.Nil(t, b.window(t), "another tenant's change leaves this tenant's entries")
	b.senders.ForgetTenant(b.typ.TenantID)
	require.Equal(t, int32(3), *b.window(t))

	who, err := b.senders.APIKeyWithTypes(ctx, b.key)
	require.NoError(t, err)
	created := testfactory.MessageType(t, b.pool, &testfactory.MessageTypeOpts{Code: "INVOIC02"})
	mt, err := who.MessageType(ctx, "INVOIC02")
	require.NoError(t, err, "a type created by another process is used at once")
	require.Equal(t, created.ID, mt.ID)
	again, err := b.senders.APIKeyWithTypes(ctx, b.key)
	require.NoError(t, err)
	_, err = again.MessageType(ctx, "INVOIC02")
	require.NoError(t, err, "and the fresh lookup is what is cached now")

	_, err = who.MessageType(ctx, "DESADV01")
	ae, ok := apperr.As(err)
	require.True(t, ok)
	require.Equal(t, "unknown-message-type", ae.Type)
	require.True(t, sender.IsUnknownType(err))

	b.exec(t, `UPDATE api_keys SET revoked_at = now()`)
	_, err = again.MessageType(ctx, "DESADV01")
	require.ErrorIs(t, err, sender.ErrBadAPIKey, "the lookup past the cache sees the revocation")
}

// Unknown keys are never cached: a client sending random keys makes the
// cache grow by nothing, and each of its requests costs the lookup it
// always did.
func TestUnknownKeysAreNotCached(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	b := setupCache(t)
	for range 200 {
		_, err := b.senders.APIKeyWithTypes(ctx, "edh_"+rand.Text())
		require.ErrorIs(t, err, sender.ErrBadAPIKey)
	}
	require.Zero(t, b.senders.CachedKeys())
	_, err := b.senders.APIKeyWithTypes(ctx, b.key)
	require.NoError(t, err)
	require.Equal(t, 1, b.senders.CachedKeys())
}

// Many requests of one key around a revocation that this process makes:
// every lookup that starts after the revocation and Forget returned is
// refused, however many lookups were under way or cached before it.
func TestConcurrentLookupsAroundARevocation(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	b := setupCache(t)
	var id int64
	require.NoError(t, b.pool.QueryRow(ctx, `SELECT id FROM api_keys`).Scan(&id))

	var revoked atomic.Bool
	var accepted, refusedAfter, acceptedAfter atomic.Int64
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for range 64 {
		wg.Go(func() {
			for {
				select {
				case <-stop:
					return
				default:
				}
				after := revoked.Load()
				_, err := b.senders.APIKeyWithTypes(ctx, b.key)
				switch {
				case err == nil && after:
					acceptedAfter.Add(1)
				case err == nil:
					accepted.Add(1)
				case errors.Is(err, sender.ErrBadAPIKey) && after:
					refusedAfter.Add(1)
				case !errors.Is(err, sender.ErrBadAPIKey):
					t.Errorf("lookup: %v", err)
				}
			}
		})
	}
	require.Eventually(t, func() bool { return accepted.Load() >= 500 }, 30*time.Second, time.Millisecond)
	require.NoError(t, provision.New(b.pool).AnnouncingChanges(b.senders.ForgetTenant).RevokeAPIKey(ctx, provision.ByCLI, id))
	revoked.Store(true)
	require.Eventually(t, func() bool { return refusedAfter.Load() >= 500 }, 30*time.Second, time.Millisecond)
	close(stop)
	wg.Wait()
	require.Zero(t, acceptedAfter.Load(), "no lookup started after the revocation was accepted")
	require.Zero(t, b.senders.CachedKeys())
}

// Listen applies changes made by other processes as soon as they commit:
// with a TTL of an hour and a clock that stands still, only the
// notifications of migration 020 can end the cached entries here.
func TestListenAppliesOtherProcessesChanges(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(context.Background())
	b := setupCache(t)
	done := make(chan struct{})
	go func() {
		defer close(done)
		b.senders.Listen(ctx, slog.New(slog.NewTextHandler(io.Discard, nil)))
	}()
	t.Cleanup(func() { cancel(); <-done })
	require.Eventually(t, func() bool {
		return pgtest.Count(t, b.pool, `SELECT count(*) FROM pg_stat_activity
			WHERE datname = current_database() AND query = 'LISTEN "edihub_senders"'`) == 1
	}, 10*time.Second, 10*time.Millisecond, "the listener listens")
	// Listening, it has forgotten what was cached before; from here on
	// only notifications make it forget.
	require.Nil(t, b.window(t))

	b.exec(t, `UPDATE message_types SET duplicate_window_hours = 5`)
	require.Eventually(t, func() bool { w := b.window(t); return w != nil && *w == 5 },
		5*time.Second, 5*time.Millisecond, "a type edited elsewhere applies on notice")

	b.exec(t, `UPDATE message_types SET duplicate_window_hours = 6`)
	require.Eventually(t, func() bool { return *b.window(t) == 6 }, 5*time.Second, 5*time.Millisecond)

	b.exec(t, `UPDATE api_keys SET revoked_at = now()`)
	require.Eventually(t, func() bool {
		_, err := b.senders.APIKeyWithTypes(ctx, b.key)
		return errors.Is(err, sender.ErrBadAPIKey)
	}, 5*time.Second, 5*time.Millisecond, "a key revoked elsewhere stops on notice")
}
