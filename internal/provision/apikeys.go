package provision

import (
	"context"
	"fmt"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/lefia/edihub/internal/apikey"
	"github.com/lefia/edihub/internal/apperr"
	"github.com/lefia/edihub/internal/auditevent"
	"github.com/lefia/edihub/internal/auth"
	"github.com/lefia/edihub/internal/db"
)

// MaxGrace bounds the grace period of a rotation: long enough for any
// sender's change window, short enough that a forgotten old credential does
// not live on for good.
const MaxGrace = 30 * 24 * time.Hour

// APIKey is an API key as the keys page and `apikey list` show it: never
// the key itself, which is not stored, only its first characters.
type APIKey = db.APIKeyListRow

// APIKeyState says whether a key works at now (see CredentialState).
func APIKeyState(k APIKey, now time.Time) string { return CredentialState(k.RevokedAt, now) }

// CredentialState says whether an API key or integration secret that stops
// working at stops (nil: never) works at now: "active", "expiring" (a
// rotated one in its grace period) or "revoked".
func CredentialState(stops *time.Time, now time.Time) string {
	switch {
	case stops == nil:
		return "active"
	case stops.After(now):
		return "expiring"
	}
	return "revoked"
}

// APIKeys lists the keys scope may see, revoked ones included.
func (s *Service) APIKeys(ctx context.Context, scope auth.Scope) ([]APIKey, error) {
	keys, err := db.On(s.pool).APIKeyList(ctx, scope.TenantFilter())
	if err != nil {
		return nil, fmt.Errorf("list api keys: %w", err)
	}
	return keys, nil
}

// MaxAPIKeyName bounds an API key's name (api_keys_name_length).
const MaxAPIKeyName = 100

// apiKeyName is name as a key keeps it, or why it cannot be one: a key's
// name tells it from the environment's other keys on the keys page.
func apiKeyName(name string) (string, error) {
	name = strings.TrimSpace(name)
	if n := utf8.RuneCountInString(name); n == 0 || n > MaxAPIKeyName {
		return "", apperr.New(apperr.Invalid, "invalid-field",
			"give the key a name of 1 to %d characters that says who sends with it, e.g. SAP PI production", MaxAPIKeyName)
	}
	if strings.ContainsFunc(name, unicode.IsControl) {
		return "", apperr.New(apperr.Invalid, "invalid-field", "a key's name is one line of text, without control characters")
	}
	return name, nil
}

// CreateAPIKey creates a key named name for a tenant's environment and
// returns its secret, which is not stored and cannot be shown again.
func (s *Service) CreateAPIKey(ctx context.Context, by By, tenantSlug, envSlug, name string) (string, error) {
	name, err := apiKeyName(name)
	if err != nil {
		return "", err
	}
	key, err := apikey.Generate()
	if err != nil {
		return "", err
	}
	err = db.WithTx(ctx, s.pool, func(q *db.Queries) error {
		t, e, err := tenantEnvironment(ctx, q, tenantSlug, envSlug)
		if err != nil {
			return err
		}
		if !by.Scope.Allows(t.ID) {
			return apperr.New(apperr.Forbidden, "forbidden", "you can create API keys in your own tenant only")
		}
		id, err := q.APIKeyInsert(ctx, db.APIKeyInsertParams{
			TenantID: t.ID, EnvironmentID: e.ID, KeyHash: key.Hash[:], KeyPrefix: key.Prefix, Name: name,
		})
		if err != nil {
			return fmt.Errorf("store api key: %w", err)
		}
		return auditevent.Record(ctx, q, by.Actor, &t.ID, auditevent.APIKeyCreated,
			map[string]any{"api_key_id": id, "environment": envSlug, "prefix": key.Prefix, "name": name})
	})
	if err != nil {
		return "", err
	}
	return key.Secret, nil
}

// RevokeAPIKey makes the key with id stop working at once: the next request
// that presents it is refused. Revoking a revoked key changes nothing but
// is recorded all the same.
func (s *Service) RevokeAPIKey(ctx context.Context, by By, id int64) error {
	var tenantID int64
	err := db.WithTx(ctx, s.pool, func(q *db.Queries) error {
		k, err := revokeAPIKey(ctx, q, by, id, time.Now())
		if err != nil {
			return err
		}
		tenantID = k.TenantID
		return auditevent.Record(ctx, q, by.Actor, &k.TenantID, auditevent.APIKeyRevoked,
			map[string]any{"api_key_id": id, "prefix": k.KeyPrefix})
	})
	if err == nil {
		s.Announce(tenantID)
	}
	return err
}

// RotateAPIKey gives the key with id a successor in the same environment
// and lets the old key work for grace more (none: it stops at once), so
// that a sender switches keys without a refused request. The successor
// takes the old key's name: the same sender uses it. It returns the new
// key's secret, to be shown once.
func (s *Service) RotateAPIKey(ctx context.Context, by By, id int64, grace time.Duration) (string, error) {
	if grace < 0 || grace > MaxGrace {
		return "", apperr.New(apperr.Invalid, "invalid-field",
			"the grace period must be from 0 to %d hours", int(MaxGrace/time.Hour))
	}
	key, err := apikey.Generate()
	if err != nil {
		return "", err
	}
	now := time.Now()
	oldStops := now.Add(grace).UTC()
	var tenantID int64
	err = db.WithTx(ctx, s.pool, func(q *db.Queries) error {
		old, err := revokeAPIKey(ctx, q, by, id, oldStops)
		if err != nil {
			return err
		}
		tenantID = old.TenantID
		if old.RevokedBefore != nil && !old.RevokedBefore.After(now) {
			return apperr.New(apperr.Conflict, "revoked", "API key %d is revoked: create a new key instead", id)
		}
		newID, err := q.APIKeyInsert(ctx, db.APIKeyInsertParams{
			TenantID: old.TenantID, EnvironmentID: old.EnvironmentID, KeyHash: key.Hash[:], KeyPrefix: key.Prefix,
			Name: old.Name,
		})
		if err != nil {
			return fmt.Errorf("store api key: %w", err)
		}
		return auditevent.Record(ctx, q, by.Actor, &old.TenantID, auditevent.APIKeyRotated, map[string]any{
			"api_key_id": id, "prefix": old.KeyPrefix, "old_key_stops_at": oldStops,
			"new_api_key_id": newID, "new_prefix": key.Prefix,
		})
	})
	if err != nil {
		return "", err
	}
	// The old key's cached lookup must end with its grace period, which
	// the rotation has just set.
	s.Announce(tenantID)
	return key.Secret, nil
}

// revokeAPIKey sets the revocation of a key in by's scope to at (or keeps
// an earlier one) and returns it.
func revokeAPIKey(ctx context.Context, q *db.Queries, by By, id int64, at time.Time) (db.APIKeyRevokeRow, error) {
	rows, err := q.APIKeyRevoke(ctx, db.APIKeyRevokeParams{ID: id, RevokeAt: at, ScopeTenantID: by.Scope.TenantFilter()})
	if err != nil {
		return db.APIKeyRevokeRow{}, fmt.Errorf("revoke api key %d: %w", id, err)
	}
	if len(rows) == 0 {
		return db.APIKeyRevokeRow{}, notInScope("API key", id)
	}
	return rows[0], nil
}
