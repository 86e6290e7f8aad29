package provision

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"

	"github.com/lefia/edihub/internal/apperr"
	"github.com/lefia/edihub/internal/auditevent"
	"github.com/lefia/edihub/internal/auth"
	"github.com/lefia/edihub/internal/db"
	"github.com/lefia/edihub/internal/signature"
)

// integrationSecret returns the secret a new secret of scheme will be: the
// sender's own when given (validated), else a generated one. Bearer
// integrations take none.
func integrationSecret(scheme signature.Scheme, given string) (string, error) {
	switch {
	case scheme == signature.Bearer && given != "":
		return "", apperr.New(apperr.Invalid, "invalid-field",
			"the bearer scheme authenticates with the environment's API keys and takes no --secret")
	case scheme == signature.Bearer:
		// Nothing to sign with: the sender presents an API key instead.
		return "", nil
	case given == "":
		return signature.GenerateSecret(scheme)
	}
	if err := signature.ValidateSecret(scheme, given); err != nil {
		return "", apperr.New(apperr.Invalid, "invalid-field", "%v", err)
	}
	return given, nil
}

// Integration is an integration as the integrations page and `integration
// list` show it, with its secrets, newest first.
type Integration struct {
	db.IntegrationListRow
	Secrets []IntegrationSecret
}

// IntegrationSecret is what may be shown of a secret: never the secret.
type IntegrationSecret = db.IntegrationSecretListRow

// Integrations lists the integrations scope may see, with their secrets,
// expired ones included.
func (s *Service) Integrations(ctx context.Context, scope auth.Scope) ([]Integration, error) {
	q := db.On(s.pool)
	rows, err := q.IntegrationList(ctx, scope.TenantFilter())
	if err != nil {
		return nil, fmt.Errorf("list integrations: %w", err)
	}
	secrets, err := q.IntegrationSecretList(ctx, scope.TenantFilter())
	if err != nil {
		return nil, fmt.Errorf("list integration secrets: %w", err)
	}
	of := map[uuid.UUID][]IntegrationSecret{}
	for _, sec := range secrets {
		of[sec.IntegrationID] = append(of[sec.IntegrationID], sec)
	}
	list := make([]Integration, len(rows))
	for i, r := range rows {
		list[i] = Integration{IntegrationListRow: r, Secrets: of[r.ID]}
	}
	return list, nil
}

// integrationInScope loads the integration with id if by's scope holds it,
// and answers as if it did not exist otherwise.
func integrationInScope(ctx context.Context, q *db.Queries, by By, id string) (db.Integration, error) {
	notFound := notInScope("integration", id)
	uid, err := uuid.Parse(id)
	if err != nil {
		return db.Integration{}, notFound
	}
	in, err := q.IntegrationGet(ctx, uid)
	if errors.Is(err, db.ErrNotFound) || (err == nil && !by.Scope.Allows(in.TenantID)) {
		return db.Integration{}, notFound
	}
	if err != nil {
		return db.Integration{}, fmt.Errorf("load integration %s: %w", id, err)
	}
	return in, nil
}

// AddIntegrationSecret gives an integration a new secret, for a sender that
// rotates or for one whose secrets were all revoked, and lets every secret
// it held so far expire grace from now (or sooner, if one was already due),
// so that deliveries signed with an old secret still verify until the
// sender has switched over. A grace of zero retires the old secrets at
// once. An empty secret means generate one (Stripe and Shopify issue their
// own, which the admin gives). The new secret is returned so that it can be
// shown once.
func (s *Service) AddIntegrationSecret(ctx context.Context, by By, integrationID, secret string, grace time.Duration) (string, error) {
	if grace < 0 || grace > MaxGrace {
		return "", apperr.New(apperr.Invalid, "invalid-field",
			"the grace period must be from 0 to %d hours", int(MaxGrace/time.Hour))
	}
	oldExpireAt := time.Now().Add(grace).UTC()
	err := db.WithTx(ctx, s.pool, func(q *db.Queries) error {
		in, err := integrationInScope(ctx, q, by, integrationID)
		if err != nil {
			return err
		}
		scheme := signature.Scheme(in.Scheme)
		if scheme == signature.Bearer {
			return apperr.New(apperr.Invalid, "invalid-field",
				"a bearer integration has no secret to rotate: its senders present the environment's API keys")
		}
		if secret, err = integrationSecret(scheme, secret); err != nil {
			return err
		}
		expiring, err := q.IntegrationSecretsExpire(ctx, db.IntegrationSecretsExpireParams{
			IntegrationID: in.ID, ExpiresAt: oldExpireAt,
		})
		if err != nil {
			return fmt.Errorf("expire old secrets: %w", err)
		}
		if err := q.IntegrationSecretInsert(ctx, db.IntegrationSecretInsertParams{IntegrationID: in.ID, Secret: secret}); err != nil {
			return fmt.Errorf("store integration secret: %w", err)
		}
		// The event says when the old secrets stop working, never what any
		// secret is.
		return auditevent.Record(ctx, q, by.Actor, &in.TenantID, auditevent.IntegrationSecretAdded, map[string]any{
			"integration_id": in.ID.String(), "old_secrets_expiring": expiring, "old_secrets_expire_at": oldExpireAt,
		})
	})
	if err != nil {
		return "", err
	}
	return secret, nil
}

// RevokeIntegrationSecrets makes the secret with secretID of an integration
// stop working at once, or with secretID 0 every secret it has, so that a
// delivery signed with one is refused from the next request on. Revoking a
// revoked secret changes nothing but is recorded all the same.
func (s *Service) RevokeIntegrationSecrets(ctx context.Context, by By, integrationID string, secretID int64) error {
	return db.WithTx(ctx, s.pool, func(q *db.Queries) error {
		in, err := integrationInScope(ctx, q, by, integrationID)
		if err != nil {
			return err
		}
		if signature.Scheme(in.Scheme) == signature.Bearer {
			return apperr.New(apperr.Invalid, "invalid-field",
				"a bearer integration has no secret to revoke: its senders present the environment's API keys; revoke those instead")
		}
		params := db.IntegrationSecretRevokeParams{
			ExpiresAt: time.Now(), IntegrationID: in.ID, ScopeTenantID: by.Scope.TenantFilter(),
		}
		if secretID != 0 {
			params.SecretID = &secretID
		}
		ids, err := q.IntegrationSecretRevoke(ctx, params)
		if err != nil {
			return fmt.Errorf("revoke secrets of integration %s: %w", integrationID, err)
		}
		if secretID != 0 && len(ids) == 0 {
			return notInScope("secret", secretID)
		}
		return auditevent.Record(ctx, q, by.Actor, &in.TenantID, auditevent.IntegrationSecretRevoked,
			map[string]any{"integration_id": integrationID, "secret_ids": ids})
	})
}

// checkTolerance refuses a signature timestamp tolerance an integration
// cannot have.
func checkTolerance(tolerance time.Duration) error {
	if !signature.ValidTolerance(tolerance) {
		return apperr.New(apperr.Invalid, "invalid-field",
			"the signature tolerance must be whole seconds from %d to %d, not %s",
			int(signature.MinTolerance/time.Second), int(signature.MaxTolerance/time.Second), tolerance)
	}
	return nil
}

// SetIntegrationTolerance changes how far a delivery's signing time may be
// from edihub's clock for an integration by's scope holds; it applies from
// the next delivery on. Schemes that sign no time keep it unused.
func (s *Service) SetIntegrationTolerance(ctx context.Context, by By, integrationID string, tolerance time.Duration) error {
	if err := checkTolerance(tolerance); err != nil {
		return err
	}
	uid, err := uuid.Parse(integrationID)
	if err != nil {
		return notInScope("integration", integrationID)
	}
	seconds := int32(tolerance / time.Second)
	return db.WithTx(ctx, s.pool, func(q *db.Queries) error {
		row, err := q.IntegrationToleranceSet(ctx, db.IntegrationToleranceSetParams{
			SignatureToleranceSeconds: seconds, ID: uid, ScopeTenantID: by.Scope.TenantFilter(),
		})
		if errors.Is(err, db.ErrNotFound) {
			return notInScope("integration", integrationID)
		}
		if err != nil {
			return fmt.Errorf("set tolerance of integration %s: %w", integrationID, err)
		}
		return auditevent.Record(ctx, q, by.Actor, &row.TenantID, auditevent.IntegrationToleranceChanged, map[string]any{
			"integration_id": integrationID, "before_seconds": row.BeforeSeconds, "after_seconds": seconds,
		})
	})
}
