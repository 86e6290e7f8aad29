package provision

import (
	"context"
	"fmt"
	"net"
	"strconv"
	"strings"

	"github.com/lefia/edihub/internal/apperr"
	"github.com/lefia/edihub/internal/db"
	"github.com/lefia/edihub/internal/egress"
	"github.com/lefia/edihub/internal/signature"
)

// DefaultMaxConcurrency is how many deliveries to one destination a worker
// process runs at once unless the destination says otherwise.
const DefaultMaxConcurrency = 4

// DestinationSpec describes a destination to create.
type DestinationSpec struct {
	TenantSlug      string
	EnvironmentSlug string
	URL             string
	// MessageTypeCodes limits the destination to these types; empty takes
	// every type.
	MessageTypeCodes []string
	// Secret is the whsec_ signing secret; empty generates one.
	Secret string
	// MaxConcurrency is how many deliveries to the destination one worker
	// process runs at once, from 1 to 100.
	MaxConcurrency int32
}

// CreateDestination creates a destination and returns its id and signing
// secret. Its URL must be allowed by policy now (the delivery workers check
// every connection again, against the address they connect to).
func (s *Service) CreateDestination(ctx context.Context, spec DestinationSpec, policy egress.Policy) (id int64, secret string, err error) {
	if err := policy.CheckURL(ctx, net.DefaultResolver, spec.URL); err != nil {
		return 0, "", apperr.New(apperr.Invalid, "invalid-field", "destination URL %q: %v", spec.URL, err)
	}
	if spec.MaxConcurrency < 1 || spec.MaxConcurrency > 100 {
		return 0, "", apperr.New(apperr.Invalid, "invalid-field", "the concurrency limit must be from 1 to 100, not %d", spec.MaxConcurrency)
	}
	if secret = spec.Secret; secret == "" {
		if secret, err = signature.GenerateSecret(signature.StandardWebhooks); err != nil {
			return 0, "", err
		}
	} else if err := validateSigningSecret(secret); err != nil {
		return 0, "", err
	}
	err = db.WithTx(ctx, s.pool, func(q *db.Queries) error {
		t, e, err := tenantEnvironment(ctx, q, spec.TenantSlug, spec.EnvironmentSlug)
		if err != nil {
			return err
		}
		typeIDs := make([]int64, 0, len(spec.MessageTypeCodes))
		for _, code := range spec.MessageTypeCodes {
			mt, err := messageType(ctx, q, t, code)
			if err != nil {
				return err
			}
			typeIDs = append(typeIDs, mt.ID)
		}
		id, err = q.DestinationInsert(ctx, db.DestinationInsertParams{
			TenantID: t.ID, EnvironmentID: e.ID, Url: spec.URL, MessageTypeIds: typeIDs, Secret: secret,
			MaxConcurrency: spec.MaxConcurrency,
		})
		if err != nil {
			return fmt.Errorf("store destination: %w", err)
		}
		return audit(ctx, q, &t.ID, "destination.created", map[string]any{
			"destination_id": strconv.FormatInt(id, 10), "environment": e.Slug, "url": spec.URL,
			"message_types": spec.MessageTypeCodes,
		})
	})
	if err != nil {
		return 0, "", err
	}
	return id, secret, nil
}

// validateSigningSecret accepts a Standard Webhooks secret edihub can sign
// with: "whsec_" and the base64 of an HMAC key. A receiver's public key
// (whpk_) or a bare key would verify, but could not sign.
func validateSigningSecret(secret string) error {
	if !strings.HasPrefix(secret, "whsec_") {
		return apperr.New(apperr.Invalid, "invalid-field", "the signing secret must start with whsec_ (a Standard Webhooks HMAC secret)")
	}
	if err := signature.ValidateSecret(signature.StandardWebhooks, secret); err != nil {
		return apperr.New(apperr.Invalid, "invalid-field", "%v", err)
	}
	return nil
}
