// Package sender decides who is sending a message and as which message
// type, so that the HTTP layer only reads credentials and answers. An API
// key names a tenant and environment, and the body names one of the
// tenant's types; a webhook's integration names all three, and its
// deliveries are deduplicated by keys of the integration's own.
package sender

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/lefia/edihub/internal/apikey"
	"github.com/lefia/edihub/internal/apperr"
	"github.com/lefia/edihub/internal/db"
	"github.com/lefia/edihub/internal/messagetype"
)

// Service looks senders up.
type Service struct {
	pool *pgxpool.Pool
	// callers remembers recent API key lookups; nil when API_KEY_CACHE_TTL
	// is 0, and then every request looks its key up.
	callers *callerCache
}

// New returns a Service reading from pool that keeps the answer of an API
// key's lookup for cacheTTL (0: not at all).
func New(pool *pgxpool.Pool, cacheTTL time.Duration) *Service {
	s := &Service{pool: pool}
	if cacheTTL > 0 {
		s.callers = newCallerCache(cacheTTL)
	}
	return s
}

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
	types []messagetype.Type
	// reread looks the key up again, past the cache; nil when types were
	// just read from the database.
	reread func(context.Context) (Typed, error)
}

// MessageType is the tenant's type with code. Types that came from the
// cache may lack one created since by another process (`edihub
// message-type create`, another replica): then the key and types are read
// once more, past the cache, before code is called unknown, so that a new
// type works at once everywhere. The error is then that of the lookup (a
// revoked key, an unreachable database) if it failed.
func (t *Typed) MessageType(ctx context.Context, code string) (messagetype.Type, error) {
	if mt, ok := t.find(code); ok {
		return mt, nil
	}
	if t.reread != nil {
		fresh, err := t.reread(ctx)
		if err != nil {
			return messagetype.Type{}, err
		}
		*t = fresh
		if mt, ok := t.find(code); ok {
			return mt, nil
		}
	}
	return messagetype.Type{}, errUnknownType(code)
}

func (t *Typed) find(code string) (messagetype.Type, bool) {
	i := slices.IndexFunc(t.types, func(mt messagetype.Type) bool { return mt.Code == code })
	if i < 0 {
		return messagetype.Type{}, false
	}
	return t.types[i], true
}

func errUnknownType(code string) error {
	return apperr.New(apperr.Unprocessable, unknownType, "message type %q is not configured for this tenant", code)
}

// unknownType is the problem type of a message type the tenant does not have.
const unknownType = "unknown-message-type"

// IsUnknownType reports whether err says that a message's type is not
// one of the tenant's.
func IsUnknownType(err error) bool {
	ae, ok := apperr.As(err)
	return ok && ae.Type == unknownType
}

// APIKey authenticates key.
func (s *Service) APIKey(ctx context.Context, key string) (Caller, error) {
	if s.callers != nil {
		who, err := s.APIKeyWithTypes(ctx, key)
		return who.Caller, err
	}
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
// round trip for both (see APIKeyGetWithMessageTypes), or none while the
// answer is cached.
func (s *Service) APIKeyWithTypes(ctx context.Context, key string) (Typed, error) {
	hash := apikey.Hash(key)
	if s.callers == nil {
		who, _, err := s.lookUp(ctx, hash)
		return who, err
	}
	load := func(ctx context.Context) (Typed, *time.Time, error) { return s.lookUp(ctx, hash) }
	who, cached, err := s.callers.get(ctx, hash, load)
	if err != nil || !cached {
		return who, err
	}
	who.reread = func(ctx context.Context) (Typed, error) {
		s.callers.drop(hash)
		who, _, err := s.callers.get(ctx, hash, load)
		return who, err
	}
	return who, nil
}

// lookUp reads the key with hash and its tenant's types from the database,
// and when the key stops working (nil: when it is revoked).
func (s *Service) lookUp(ctx context.Context, hash [sha256.Size]byte) (Typed, *time.Time, error) {
	rows, err := db.On(s.pool).APIKeyGetWithMessageTypes(ctx, hash[:])
	if err != nil {
		return Typed{}, nil, fmt.Errorf("look up api key: %w", err)
	}
	if len(rows) == 0 {
		return Typed{}, nil, ErrBadAPIKey
	}
	t := Typed{Caller: Caller{APIKeyID: rows[0].ID, TenantID: rows[0].TenantID, EnvironmentID: rows[0].EnvironmentID}}
	for _, r := range rows {
		if mt, ok := r.MessageType(); ok {
			t.types = append(t.types, messagetype.Prepare(mt))
		}
	}
	return t, rows[0].RevokedAt, nil
}

// ForgetTenant makes every key of a tenant be looked up afresh by its next
// request: this process changed one of the tenant's keys or message types
// (provision.Service.AnnouncingChanges), and the change applies at once.
func (s *Service) ForgetTenant(tenantID int64) {
	if s.callers != nil {
		s.callers.forgetTenant(tenantID)
	}
}

// Refused is the error of storing a message for who. A foreign-key
// violation there means a message type or environment that the cached
// lookup vouched for was deleted meanwhile: the tenant's entries are
// forgotten, so that the next request is looked up afresh (and answered
// 401 or 422 as the database now says), and this one is answered as of an
// unknown type, instead of failing with the same error until the entry
// expires.
func (s *Service) Refused(who Caller, err error) error {
	if s.callers == nil || !db.IsForeignKeyViolation(err) {
		return err
	}
	s.callers.forgetTenant(who.TenantID)
	return &apperr.Error{Kind: apperr.Unprocessable, Type: unknownType, Err: err,
		Detail: "the message type or environment of this request was removed while it was received; send it again"}
}
