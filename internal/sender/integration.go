package sender

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/google/uuid"

	"github.com/lefia/edihub/internal/apperr"
	"github.com/lefia/edihub/internal/db"
	"github.com/lefia/edihub/internal/ingest"
	"github.com/lefia/edihub/internal/messagetype"
	"github.com/lefia/edihub/internal/signature"
)

// Integration is a webhook sender: it decides tenant, environment and
// message type, and how its deliveries prove who sent them.
type Integration struct {
	db.Integration
	MessageType messagetype.Type
}

// Bearer reports whether the integration's deliveries authenticate with
// an API key of its environment rather than with a signature.
func (in Integration) Bearer() bool { return signature.Scheme(in.Scheme) == signature.Bearer }

// Actor names the integration in the audit trail.
func (in Integration) Actor() string { return "integration:" + in.ID.String() }

// Integration loads the integration rawID names, with its message type as
// it is now. A malformed id is answered like an unknown one, so that the
// URL space reveals nothing.
func (s *Service) Integration(ctx context.Context, rawID string) (Integration, error) {
	notFound := apperr.New(apperr.NotFound, "not-found", "integration %q does not exist", rawID)
	id, err := uuid.Parse(rawID)
	if err != nil {
		return Integration{}, notFound
	}
	row, err := db.On(s.pool).IntegrationGetWithMessageType(ctx, id)
	if errors.Is(err, db.ErrNotFound) {
		return Integration{}, notFound
	}
	if err != nil {
		return Integration{}, fmt.Errorf("load integration %s: %w", id, err)
	}
	return Integration{Integration: row.Integration, MessageType: messagetype.Prepare(row.MessageType)}, nil
}

// AuthenticateBearer checks a bearer integration's API key. Any key of the
// tenant is a valid API key, but only one of the integration's own
// environment may write into it.
func (s *Service) AuthenticateBearer(ctx context.Context, in Integration, key string) error {
	who, err := s.APIKey(ctx, key)
	if err != nil {
		return err
	}
	if who.TenantID != in.TenantID || who.EnvironmentID != in.EnvironmentID {
		return apperr.New(apperr.Unauthorized, "unauthorized",
			"the API key does not belong to this integration's environment")
	}
	return nil
}

// DeliveryKey is the idempotency key of a webhook delivery, always scoped
// to its integration: a webhook sender can neither probe nor pre-claim the
// keys of the environment's receive-message clients, nor another
// integration's.
type DeliveryKey struct {
	key string // "" means deduplicate by fingerprint, unless isContent
	// isContent makes the content's digest the key (see
	// ingest.Request.KeyIsContent).
	isContent bool
	// Unused says why a signed delivery id was not made the key (the
	// content's digest is instead), for the log; nil otherwise.
	Unused error
}

// BearerKey is a bearer delivery's key: its Idempotency-Key, which the API
// key that authenticated the request vouches for, or none ("").
func BearerKey(idempotencyKey string) DeliveryKey { return DeliveryKey{key: idempotencyKey} }

// errNoCurrentSecret refuses a delivery to an integration without a
// current secret, as a sender's failure: an admin revoked the secrets on
// purpose.
var errNoCurrentSecret = apperr.New(apperr.Unauthorized, "invalid-signature",
	"the integration has no current secret to verify deliveries with")

// Verify checks a delivery's signature over its raw body against the
// integration's current secrets, at time now, and returns the delivery's
// key. A signed identity wins over anything unsigned: an Idempotency-Key
// header, or the delivery id headers of GitHub and Shopify, could be
// changed by anyone replaying a captured delivery, so they are not used.
// The key is the delivery id the signature covers (Standard Webhooks'
// webhook-id, the Stripe event's id); where there is none, or it is not
// usable as a key, the digest of the body's content: a body whose signature
// the integration already accepted within the message type's window is then
// a duplicate, whatever its unsigned headers say, which matters for the
// schemes that sign no timestamp and so could be replayed at any time.
func (s *Service) Verify(ctx context.Context, in Integration, header http.Header, body []byte, now time.Time) (DeliveryKey, error) {
	secrets, err := db.On(s.pool).IntegrationSecretsCurrent(ctx, in.ID)
	if err != nil {
		return DeliveryKey{}, fmt.Errorf("load secrets of integration %s: %w", in.ID, err)
	}
	if len(secrets) == 0 {
		// An admin revoked every secret, or let the last ones expire: the
		// integration refuses every delivery until it is given a new one.
		return DeliveryKey{}, errNoCurrentSecret
	}
	signedID, err := signature.VerifyWithin(signature.Scheme(in.Scheme), secrets, header, body, now,
		time.Duration(in.SignatureToleranceSeconds)*time.Second)
	var verr *signature.VerifyError
	switch {
	case errors.As(err, &verr):
		// The text names the failed check and header, never the expected
		// signature or the secret, so the sender may see it.
		return DeliveryKey{}, apperr.New(apperr.Unauthorized, "invalid-signature", "%s", verr.Error())
	case err != nil:
		// The integration itself is unusable (its secret, say): the sender
		// cannot fix that, an operator must.
		return DeliveryKey{}, fmt.Errorf("verify signature for integration %s: %w", in.ID, err)
	}
	if signedID == "" {
		return DeliveryKey{isContent: true}, nil
	}
	// The delivery is validly signed, so refusing it for an id that cannot
	// be stored would only make the sender retry for ever.
	if err := ingest.CheckKey(signedID); err != nil {
		return DeliveryKey{isContent: true, Unused: err}, nil
	}
	return DeliveryKey{key: signedID}, nil
}

// Request is the ingest request of a delivery to in, deduplicated by key.
func (in Integration) Request(key DeliveryKey, docnum string, payload []byte, source ingest.Source) ingest.Request {
	source.Endpoint, source.IntegrationID, source.Actor = ingest.EndpointWebhook, &in.ID, in.Actor()
	return ingest.Request{
		TenantID: in.TenantID, EnvironmentID: in.EnvironmentID, MessageType: in.MessageType,
		Docnum: docnum, Payload: payload,
		IdempotencyKey: key.key, KeyScope: in.ID.String(), KeyIsContent: key.isContent,
		Source: source,
	}
}
