package server

import (
	"errors"
	"fmt"

	"github.com/google/uuid"
	"github.com/labstack/echo/v4"

	"github.com/lefia/edihub/internal/apperr"
	"github.com/lefia/edihub/internal/db"
	"github.com/lefia/edihub/internal/envelope"
	"github.com/lefia/edihub/internal/ingest"
	"github.com/lefia/edihub/internal/signature"
)

// receiveWebhook handles POST /api/webhook/:integrationId. The integration
// decides tenant, environment and message type; the sender only proves who
// it is, by a signature over the raw body or, for bearer integrations, by
// an API key of the integration's environment.
func (s *Server) receiveWebhook(c echo.Context) error {
	in, err := s.integration(c)
	if err != nil {
		return err
	}
	report := reportOf(c)
	report.tenantID, report.environmentID = in.TenantID, in.EnvironmentID
	bearer := signature.Scheme(in.Scheme) == signature.Bearer
	if bearer {
		if err := s.authenticateForIntegration(c, in); err != nil {
			return err
		}
	}
	body, err := s.readJSONBody(c)
	if err != nil {
		return err
	}
	var key webhookKey
	if bearer {
		key, err = bearerKey(c)
	} else {
		key, err = s.verifySignature(c, in, body)
	}
	if err != nil {
		return err
	}
	// Until here only the body's size and media type were checked; its
	// content is interpreted only now that the sender is authenticated.
	env, err := envelope.ParseRaw(body)
	if err != nil {
		return err
	}
	res, err := s.ingest.Receive(c.Request().Context(), ingest.Request{
		TenantID:       in.TenantID,
		EnvironmentID:  in.EnvironmentID,
		MessageTypeID:  in.MessageTypeID,
		Docnum:         env.Docnum,
		Payload:        env.Payload,
		IdempotencyKey: key.key,
		KeyScope:       in.ID.String(),
		KeyIsContent:   key.isContent,
		Source: ingest.Source{
			Endpoint: ingest.EndpointWebhook, IntegrationID: &in.ID,
			RemoteAddr: c.RealIP(), Actor: "integration:" + in.ID.String(),
			Headers: senderHeaders(c.Request().Header), RequestID: requestID(c),
		},
	})
	if err != nil {
		return err
	}
	return writeResult(c, res)
}

// integration loads the integration the path names. A malformed id is
// answered like an unknown one, so the URL space reveals nothing.
func (s *Server) integration(c echo.Context) (db.Integration, error) {
	raw := c.Param("integrationId")
	notFound := apperr.New(apperr.NotFound, "not-found", "integration %q does not exist", raw)
	id, err := uuid.Parse(raw)
	if err != nil {
		return db.Integration{}, notFound
	}
	in, err := db.New(s.pool).IntegrationGet(c.Request().Context(), id)
	if db.IsNotFound(err) {
		return db.Integration{}, notFound
	}
	if err != nil {
		return db.Integration{}, fmt.Errorf("load integration %s: %w", id, err)
	}
	return in, nil
}

// authenticateForIntegration checks a bearer integration's API key. Any key
// of the tenant would pass authenticateAPIKey, but only one of the
// integration's own environment may write into it.
func (s *Server) authenticateForIntegration(c echo.Context, in db.Integration) error {
	who, err := s.authenticateAPIKey(c)
	if err != nil {
		return err
	}
	if who.tenantID != in.TenantID || who.environmentID != in.EnvironmentID {
		return apperr.New(apperr.Unauthorized, "unauthorized",
			"the API key does not belong to this integration's environment")
	}
	return nil
}

// webhookKey is the idempotency key of a webhook delivery, always scoped to
// its integration: a webhook sender can neither probe nor pre-claim the keys
// of the environment's receive-message clients, nor another integration's.
type webhookKey struct {
	key string // "" means deduplicate by fingerprint, unless isContent
	// isContent makes the content's digest the key (see
	// ingest.Request.KeyIsContent).
	isContent bool
}

// bearerKey is a bearer delivery's key: its Idempotency-Key, which the API
// key that authenticated the request vouches for, or none.
func bearerKey(c echo.Context) (webhookKey, error) {
	key, err := idempotencyKey(c.Request())
	return webhookKey{key: key}, err
}

// verifySignature checks the request's signature over the raw body against
// the integration's current secrets and returns the delivery's key. A signed
// identity wins over anything unsigned: an Idempotency-Key header, or the
// delivery id headers of GitHub and Shopify, could be changed by anyone
// replaying a captured delivery, so they are not used. The key is the
// delivery id the signature covers (Standard Webhooks' webhook-id, the
// Stripe event's id); where there is none, or it is not usable as a key,
// the digest of the body's content: a body whose signature the integration
// already accepted within the message type's window is then a duplicate,
// whatever its unsigned headers say, which matters for the schemes that
// sign no timestamp and so could be replayed at any time.
func (s *Server) verifySignature(c echo.Context, in db.Integration, body []byte) (webhookKey, error) {
	secrets, err := db.New(s.pool).IntegrationSecretsCurrent(c.Request().Context(), in.ID)
	if err != nil {
		return webhookKey{}, fmt.Errorf("load secrets of integration %s: %w", in.ID, err)
	}
	signedID, err := signature.Verify(signature.Scheme(in.Scheme), secrets, c.Request().Header, body, s.now())
	var verr *signature.VerifyError
	switch {
	case errors.As(err, &verr):
		// The text names the failed check and header, never the expected
		// signature or the secret, so the sender may see it.
		return webhookKey{}, apperr.New(apperr.Unauthorized, "invalid-signature", "%s", verr.Error())
	case err != nil:
		// The integration itself is unusable (its secret, say): the sender
		// cannot fix that, an operator must.
		return webhookKey{}, fmt.Errorf("verify signature for integration %s: %w", in.ID, err)
	}
	if signedID != "" {
		// The delivery is validly signed, so refusing it for an id we cannot
		// store would only make the sender retry for ever.
		err := validateIdempotencyKey(signedID)
		if err == nil {
			return webhookKey{key: signedID}, nil
		}
		s.log.Warn("webhook delivery id unusable as idempotency key; deduplicating by the content's digest",
			"integration_id", in.ID, "reason", err.Error(), "request_id", requestID(c))
	}
	return webhookKey{isContent: true}, nil
}
