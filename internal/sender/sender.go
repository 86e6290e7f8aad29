// Package sender decides who is sending a message and as which message
// type, so that the HTTP layer only reads credentials and answers. An API
// key names a tenant and environment, and the body names one of the
// tenant's types; a webhook's integration names all three, and its
// deliveries are deduplicated by keys of the integration's own.
package sender

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/lefia/edihub/internal/apikey"
	"github.com/lefia/edihub/internal/apperr"
	"github.com/lefia/edihub/internal/db"
)

// Service looks senders up.
type Service struct {
	pool *pgxpool.Pool
}

// New returns a Service reading from pool.
func New(pool *pgxpool.Pool) *Service { return &Service{pool: pool} }

// ErrBadAPIKey answers a request whose API key is missing, malformed,
// unknown or revoked: which of these it was is not said.
var ErrBadAPIKey = apperr.New(apperr.Unauthorized, "unauthorized",
	"send a valid API key as 'Authorization: Bearer <key>' (or as the password of HTTP Basic authentication)")

// Caller is an authenticated API key: the tenant and environment it may
// write to.
type Caller struct {
	APIKeyID      int64
	TenantID      int64
	EnvironmentID int64
}

// Actor names the caller in the audit trail.
func (c Caller) Actor() string { return fmt.Sprintf("api_key:%d", c.APIKeyID) }

// Typed is a caller with its tenant's message types, among which each
// message it sends names its own.
type Typed struct {
	Caller
	types []db.MessageType
}

// MessageType is the tenant's type with code.
func (t Typed) MessageType(code string) (db.MessageType, error) {
	i := slices.IndexFunc(t.types, func(mt db.MessageType) bool { return mt.Code == code })
	if i < 0 {
		return db.MessageType{}, apperr.New(apperr.Unprocessable, "unknown-message-type",
			"message type %q is not configured for this tenant", code)
	}
	return t.types[i], nil
}

// APIKey authenticates key.
func (s *Service) APIKey(ctx context.Context, key string) (Caller, error) {
	hash := apikey.Hash(key)
	row, err := db.On(s.pool).APIKeyGetByHash(ctx, hash[:])
	if errors.Is(err, db.ErrNotFound) {
		return Caller{}, ErrBadAPIKey
	}
	if err != nil {
		return Caller{}, fmt.Errorf("look up api key: %w", err)
	}
	return Caller{APIKeyID: row.ID, TenantID: row.TenantID, EnvironmentID: row.EnvironmentID}, nil
}

// APIKeyWithTypes authenticates key and returns, from the same query, the
// message types of the key's tenant, so that receive-message needs one
// round trip for both (see APIKeyGetWithMessageTypes).
func (s *Service) APIKeyWithTypes(ctx context.Context, key string) (Typed, error) {
	hash := apikey.Hash(key)
	rows, err := db.On(s.pool).APIKeyGetWithMessageTypes(ctx, hash[:])
	if err != nil {
		return Typed{}, fmt.Errorf("look up api key: %w", err)
	}
	if len(rows) == 0 {
		return Typed{}, ErrBadAPIKey
	}
	t := Typed{Caller: Caller{APIKeyID: rows[0].ID, TenantID: rows[0].TenantID, EnvironmentID: rows[0].EnvironmentID}}
	for _, r := range rows {
		if mt, ok := r.MessageType(); ok {
			t.types = append(t.types, mt)
		}
	}
	return t, nil
}
