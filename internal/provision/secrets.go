package provision

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"

	"github.com/lefia/edihub/internal/apperr"
	"github.com/lefia/edihub/internal/auditevent"
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

// AddIntegrationSecret adds a secret to an integration whose sender is
// rotating, and lets every secret it held so far expire grace from now (or
// sooner, if one was already due), so that deliveries signed with an old
// secret still verify until the sender has switched over. A grace of zero
// retires the old secrets at once. An empty secret means generate one. The
// new secret is returned so that it can be shown once.
func (s *Service) AddIntegrationSecret(ctx context.Context, integrationID, secret string, grace time.Duration) (string, error) {
	if grace < 0 {
		return "", apperr.New(apperr.Invalid, "invalid-field", "the grace period cannot be negative")
	}
	notFound := apperr.New(apperr.NotFound, "not-found", "integration %q does not exist", integrationID)
	id, err := uuid.Parse(integrationID)
	if err != nil {
		return "", notFound
	}
	oldExpireAt := time.Now().Add(grace).UTC()
	err = db.WithTx(ctx, s.pool, func(q *db.Queries) error {
		in, err := q.IntegrationGet(ctx, id)
		if errors.Is(err, db.ErrNotFound) {
			return notFound
		}
		if err != nil {
			return fmt.Errorf("load integration %s: %w", id, err)
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
			IntegrationID: id, ExpiresAt: oldExpireAt,
		})
		if err != nil {
			return fmt.Errorf("expire old secrets: %w", err)
		}
		if err := q.IntegrationSecretInsert(ctx, db.IntegrationSecretInsertParams{IntegrationID: id, Secret: secret}); err != nil {
			return fmt.Errorf("store integration secret: %w", err)
		}
		// The event says when the old secrets stop working, never what any
		// secret is.
		return audit(ctx, q, &in.TenantID, auditevent.IntegrationSecretAdded, map[string]any{
			"integration_id": id.String(), "old_secrets_expiring": expiring, "old_secrets_expire_at": oldExpireAt,
		})
	})
	if err != nil {
		return "", err
	}
	return secret, nil
}
