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
	// A bearer sender's delivery id is its Idempotency-Key, which the
	// explicit-key path below already covers.
	var deliveryID string
	if !bearer {
		if deliveryID, err = s.verifySignature(c, in, body); err != nil {
			return err
		}
	}
	// Until here only the body's size and media type were checked; its
	// content and the remaining headers are interpreted only now that the
	// sender is authenticated.
	key, scope, err := s.webhookKey(c, in, deliveryID)
	if err != nil {
		return err
	}
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
		IdempotencyKey: key,
		KeyScope:       scope,
		Source: ingest.Source{
			Endpoint: ingest.EndpointWebhook, IntegrationID: &in.ID,
			RemoteAddr: c.RealIP(), Actor: "integration:" + in.ID.String(),
			Headers: senderHeaders(c.Request().Header),
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

// verifySignature checks the request's signature over the raw body against
// the integration's current secrets and returns the sender's delivery id (""
// when it sent none).
func (s *Server) verifySignature(c echo.Context, in db.Integration, body []byte) (string, error) {
	secrets, err := db.New(s.pool).IntegrationSecretsCurrent(c.Request().Context(), in.ID)
	if err != nil {
		return "", fmt.Errorf("load secrets of integration %s: %w", in.ID, err)
	}
	deliveryID, err := signature.Verify(signature.Scheme(in.Scheme), secrets, c.Request().Header, body, s.now())
	var verr *signature.VerifyError
	switch {
	case errors.As(err, &verr):
		// The text names the failed check and header, never the expected
		// signature or the secret, so the sender may see it.
		return "", apperr.New(apperr.Unauthorized, "invalid-signature", "%s", verr.Error())
	case err != nil:
		// The integration itself is unusable (its secret, say): the sender
		// cannot fix that, an operator must.
		return "", fmt.Errorf("verify signature for integration %s: %w", in.ID, err)
	}
	return deliveryID, nil
}

// webhookKey picks the idempotency key and its scope: the sender's explicit
// Idempotency-Key (scoped to the environment, as on receive-message), else
// the scheme's delivery id (scoped to the integration, so two senders'
// delivery ids never collide), else none, which means fingerprint mode.
func (s *Server) webhookKey(c echo.Context, in db.Integration, deliveryID string) (key, scope string, err error) {
	key, err = idempotencyKey(c.Request())
	if err != nil || key != "" {
		return key, "", err
	}
	if deliveryID == "" {
		return "", "", nil
	}
	// The delivery is validly signed, so refusing it for an id we cannot
	// store would only make the sender retry for ever; the fingerprint
	// still catches its retransmissions.
	if err := validateIdempotencyKey(deliveryID); err != nil {
		s.log.Warn("webhook delivery id unusable as idempotency key; deduplicating by fingerprint",
			"integration_id", in.ID, "reason", err.Error(), "request_id", requestID(c))
		return "", "", nil
	}
	return deliveryID, in.ID.String(), nil
}
