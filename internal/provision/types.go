package provision

import (
	"context"
	"fmt"
	"time"

	"github.com/lefia/edihub/internal/apperr"
	"github.com/lefia/edihub/internal/auditevent"
	"github.com/lefia/edihub/internal/db"
	"github.com/lefia/edihub/internal/messagetype"
	"github.com/lefia/edihub/internal/signature"
)

// MessageTypeSpec is what a new message type is made of.
type MessageTypeSpec struct {
	Code        string
	Fields      []string // duplicate_key_fields, in order
	WindowHours *int     // nil: the default window
	// Actor is who creates the type, for the audit trail (e.g. "user:7" for
	// an admin in the browser); empty means the CLI.
	Actor string
}

// CreateMessageType creates a message type in a tenant.
func (s *Service) CreateMessageType(ctx context.Context, tenantSlug string, spec MessageTypeSpec) (db.MessageType, error) {
	var mt db.MessageType
	if err := validateMessageType(spec); err != nil {
		return mt, err
	}
	err := db.WithTx(ctx, s.pool, func(q *db.Queries) error {
		t, err := tenant(ctx, q, tenantSlug)
		if err != nil {
			return err
		}
		if err := checkRoom(ctx, q, t, "message types", messagetype.MaxTypesPerTenant, q.MessageTypeCountOfTenant); err != nil {
			return err
		}
		mt, err = insertMessageType(ctx, q, t, spec)
		return err
	})
	if err == nil {
		s.Announce(mt.TenantID)
	}
	return mt, err
}

func validateMessageType(spec MessageTypeSpec) error {
	if err := messagetype.ValidateCode(spec.Code); err != nil {
		return err
	}
	if err := messagetype.ValidateFields(spec.Fields); err != nil {
		return err
	}
	return messagetype.ValidateWindow(spec.WindowHours)
}

func insertMessageType(ctx context.Context, q *db.Queries, t db.Tenant, spec MessageTypeSpec) (db.MessageType, error) {
	var window *int32
	if spec.WindowHours != nil {
		w := int32(*spec.WindowHours)
		window = &w
	}
	mt, err := q.MessageTypeInsert(ctx, db.MessageTypeInsertParams{
		TenantID:             t.ID,
		Code:                 spec.Code,
		DuplicateKeyFields:   spec.Fields,
		DuplicateWindowHours: window,
	})
	if err != nil {
		return mt, alreadyExists(err, "message type %q already exists in tenant %q", spec.Code, t.Slug)
	}
	who := spec.Actor
	if who == "" {
		who = auditevent.ActorCLI
	}
	return mt, auditevent.RecordMessageType(ctx, q, who, mt.TenantID, mt.ID, auditevent.MessageTypeCreated, map[string]any{
		"message_type_id": mt.ID,
		"after": map[string]any{
			"code": spec.Code, "duplicate_key_fields": spec.Fields, "duplicate_window_hours": spec.WindowHours,
		},
	})
}

// IntegrationSpec is what a new integration is made of.
type IntegrationSpec struct {
	TenantSlug      string
	EnvironmentSlug string
	MessageTypeCode string
	Scheme          string
	// Secret is the sender's own secret (Stripe and Shopify generate theirs);
	// empty means generate one.
	Secret string
	// Tolerance is how far a timestamped scheme's signing time may be from
	// edihub's clock (signature.DefaultTolerance unless the sender's
	// practice differs).
	Tolerance time.Duration
}

// CreateIntegration creates an integration and returns its id and secret.
// The secret is returned so that it can be shown once to whoever configures
// the sender.
func (s *Service) CreateIntegration(ctx context.Context, spec IntegrationSpec) (id, secret string, err error) {
	scheme, err := signature.ParseScheme(spec.Scheme)
	if err != nil {
		return "", "", apperr.New(apperr.Invalid, "invalid-field", "%v", err)
	}
	if secret, err = integrationSecret(scheme, spec.Secret); err != nil {
		return "", "", err
	}
	if err := checkTolerance(spec.Tolerance); err != nil {
		return "", "", err
	}
	err = db.WithTx(ctx, s.pool, func(q *db.Queries) error {
		t, e, err := tenantEnvironment(ctx, q, spec.TenantSlug, spec.EnvironmentSlug)
		if err != nil {
			return err
		}
		mt, err := messageType(ctx, q, t, spec.MessageTypeCode)
		if err != nil {
			return err
		}
		id, err = insertIntegration(ctx, q, t, e, mt, scheme, secret, spec.Tolerance)
		return err
	})
	if err != nil {
		return "", "", err
	}
	return id, secret, nil
}

// insertIntegration stores an integration of e taking messages of type mt,
// with secret unless it is empty, and audits its creation.
func insertIntegration(ctx context.Context, q *db.Queries, t db.Tenant, e db.Environment, mt db.MessageType,
	scheme signature.Scheme, secret string, tolerance time.Duration,
) (string, error) {
	uid, err := q.IntegrationInsert(ctx, db.IntegrationInsertParams{
		TenantID: t.ID, EnvironmentID: e.ID, MessageTypeID: mt.ID, Scheme: string(scheme),
		SignatureToleranceSeconds: int32(tolerance / time.Second),
	})
	if err != nil {
		return "", fmt.Errorf("store integration: %w", err)
	}
	if secret != "" {
		if err := q.IntegrationSecretInsert(ctx, db.IntegrationSecretInsertParams{IntegrationID: uid, Secret: secret}); err != nil {
			return "", fmt.Errorf("store integration secret: %w", err)
		}
	}
	id := uid.String()
	return id, audit(ctx, q, &t.ID, auditevent.IntegrationCreated, map[string]any{
		"integration_id": id, "environment": e.Slug, "message_type": mt.Code, "scheme": string(scheme),
		"signature_tolerance_seconds": int32(tolerance / time.Second),
	})
}
