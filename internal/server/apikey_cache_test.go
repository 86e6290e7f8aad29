package server_test

import (
	"fmt"
	"net/http"
	"net/url"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/lefia/edihub/internal/auth"
	"github.com/lefia/edihub/internal/config"
	"github.com/lefia/edihub/internal/pgtest"
)

// setupCacheTTL is setup with API_KEY_CACHE_TTL=ttl ("": the default).
func setupCacheTTL(t *testing.T, ttl string) *testBundle {
	t.Helper()
	cfg, err := config.Load(func(name string) string {
		if name == "API_KEY_CACHE_TTL" {
			return ttl
		}
		return ""
	})
	require.NoError(t, err)
	return setupWith(t, pgtest.Pool(t), cfg)
}

// A key revoked by another process (the CLI, another replica; SQL here)
// is refused once its cached lookup expires, within API_KEY_CACHE_TTL of
// the lookup, by a server that does not listen for changes (as this
// test's does not). With the cache off it is refused by the next request.
func TestKeyRevokedElsewhereStopsWithinTheTTL(t *testing.T) {
	t.Parallel()
	for _, ttl := range []time.Duration{0, 300 * time.Millisecond} {
		t.Run(ttl.String(), func(t *testing.T) {
			t.Parallel()
			b := setupCacheTTL(t, ttl.String())
			b.messageType(t, "ORDERS05", nil, nil)
			require.Equal(t, http.StatusCreated, b.sends(t, b.apiKey, 1))
			looked := time.Now()
			_, err := b.pool.Exec(t.Context(), `UPDATE api_keys SET revoked_at = now()`)
			require.NoError(t, err)
			if ttl == 0 {
				require.Equal(t, http.StatusUnauthorized, b.sends(t, b.apiKey, 2))
				return
			}
			docnum := 2
			for b.sends(t, b.apiKey, docnum) != http.StatusUnauthorized {
				// The bound is the TTL; the slack is for a loaded machine.
				require.Less(t, time.Since(looked), ttl+2*time.Second, "the key still works past its cache's TTL")
				docnum++
				time.Sleep(10 * time.Millisecond)
			}
			require.Equal(t, docnum-1, b.messages(t), "every accepted request stored its message")
		})
	}
}

// A message type deleted by SQL while the lookup that listed it is cached
// makes the insert fail its foreign key: the request gets 422, not a 500,
// and the tenant's lookup is read afresh from then on. Today the database
// refuses to delete any type, which its creation's audit event refers to;
// the test drops that reference first, to stand for a schema that would
// allow it.
func TestTypeDeletedWhileCachedIsUnknown(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.messageType(t, "ORDERS05", []string{"*.IDOC.E1EDK01.BELNR"}, nil)
	b.messageType(t, "INVOIC02", nil, nil)
	b.messageType(t, "DESADV01", nil, nil)
	require.Equal(t, http.StatusCreated, b.post(t, envelopeFor(t, "ORDERS05", "orders05.json")).status, "caches the three types")
	_, err := b.pool.Exec(t.Context(), `ALTER TABLE audit_events DROP CONSTRAINT audit_events_tenant_id_message_type_id_fkey`)
	require.NoError(t, err)
	_, err = b.pool.Exec(t.Context(), `DELETE FROM message_types WHERE code IN ('INVOIC02', 'DESADV01')`)
	require.NoError(t, err)

	batch := b.postTo(t, "/api/edi-hub/receive-messages",
		[]byte(`{"messages":[{"message_type":"DESADV01","docnum":"1","payload":{"a":1}}]}`))
	require.Equal(t, http.StatusUnprocessableEntity, batch.status, "%s", batch.body)
	require.Equal(t, "unknown-message-type", problemType(t, batch))
	require.Contains(t, string(batch.body), "was removed while it was received", "the foreign key refused the cached type")

	for range 2 {
		r := b.post(t, envelopeFor(t, "INVOIC02", "invoic02.json"))
		require.Equal(t, http.StatusUnprocessableEntity, r.status, "%s", r.body)
		require.Equal(t, "unknown-message-type", problemType(t, r))
	}
	require.Equal(t, 1, b.messages(t))
}

func problemType(t *testing.T, r response) string {
	t.Helper()
	return fmt.Sprint(r.json(t)["type"])
}

// Many clients send with one key while an admin revokes it: every request
// that starts after the revocation's answer is refused (401, and 429 once
// the address has failed too often), every accepted one stored its message,
// and none fails otherwise.
func TestManyRequestsOfOneKeyAroundARevocation(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.messageType(t, "ORDERS05", nil, nil)
	admin := b.signedIn(t, "admin@acme.example", auth.RoleAdmin, "acme")
	admin.get("/admin/api-keys")

	var revoked atomic.Bool
	var docnum, accepted, refusedAfter, acceptedAfter atomic.Int64
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for range 32 {
		wg.Go(func() {
			for {
				select {
				case <-stop:
					return
				default:
				}
				after := revoked.Load()
				status := b.sends(t, b.apiKey, int(docnum.Add(1)))
				switch {
				case status == http.StatusCreated && after:
					acceptedAfter.Add(1)
				case status == http.StatusCreated:
					accepted.Add(1)
				case (status == http.StatusUnauthorized || status == http.StatusTooManyRequests) && after:
					refusedAfter.Add(1)
				case status != http.StatusUnauthorized && status != http.StatusTooManyRequests:
					// Either refusal may also answer a request that
					// started while the revocation was being answered.
					t.Errorf("status %d", status)
				}
			}
		})
	}
	require.Eventually(t, func() bool { return accepted.Load() >= 100 }, 60*time.Second, time.Millisecond)
	r := admin.submit(fmt.Sprintf("/admin/api-keys/%d/revoke", b.keyID(t, b.apiKey)), url.Values{})
	require.Equal(t, http.StatusSeeOther, r.status, "%s", r.body)
	revoked.Store(true)
	require.Eventually(t, func() bool { return refusedAfter.Load() >= 100 }, 60*time.Second, time.Millisecond)
	close(stop)
	wg.Wait()
	require.Zero(t, acceptedAfter.Load(), "no request that started after the revocation was accepted")
	require.Equal(t, int(accepted.Load()), b.messages(t))
}
