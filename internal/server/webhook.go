package server

import (
	"github.com/labstack/echo/v4"

	"github.com/lefia/edihub/internal/envelope"
	"github.com/lefia/edihub/internal/refused"
	"github.com/lefia/edihub/internal/sender"
)

// receiveWebhook handles POST /api/webhook/:integrationId. The integration
// decides tenant, environment and message type; the sender only proves who
// it is, by a signature over the raw body or, for bearer integrations, by
// an API key of the integration's environment.
func (s *Server) receiveWebhook(c echo.Context) error {
	ctx := c.Request().Context()
	in, err := s.senders.Integration(ctx, c.Param("integrationId"))
	if err != nil {
		return err
	}
	// The integration's type labels the request from here on, so that a
	// delivery cut short (its sender left, its time ran out) is counted
	// under it like one that was decided.
	report := reportOf(c)
	report.tenantID, report.environmentID = in.TenantID, in.EnvironmentID
	report.messageType, report.typeKnown = in.MessageType.Code, true
	report.sender = refused.Subject{Kind: refused.KindIntegration, Key: in.ID.String(), TenantID: in.TenantID}
	if in.Bearer() {
		err := s.withAPIKey(c, func(key string) error { return s.senders.AuthenticateBearer(ctx, in, key) })
		if err != nil {
			return err
		}
	}
	// The body is read whatever its media type: its signature is checked
	// first, so that a sender who cannot sign learns nothing more than 401
	// about what edihub would take (a form-encoded body with a bad Shopify
	// HMAC is 401, not 415).
	body, err := s.readBody(c, jsonBodyCost)
	if err != nil {
		return err
	}
	key, err := s.deliveryKey(c, in, body)
	if err != nil {
		return err
	}
	if err := requireJSON(c.Request()); err != nil {
		return err
	}
	// Until here only the body's size was checked; its content is
	// interpreted only now that the sender is authenticated.
	env, err := envelope.ParseRaw(body)
	if err != nil {
		return err
	}
	res, err := s.ingest.Receive(ctx, in.Request(key, env.Docnum, env.Payload, requestSource(c)))
	if err != nil {
		return err
	}
	return writeResult(c, res)
}

// deliveryKey is the key a delivery is deduplicated by: a bearer
// delivery's Idempotency-Key, or what its verified signature covers.
func (s *Server) deliveryKey(c echo.Context, in sender.Integration, body []byte) (sender.DeliveryKey, error) {
	if in.Bearer() {
		key, err := idempotencyKey(c.Request())
		return sender.BearerKey(key), err
	}
	key, err := s.senders.Verify(c.Request().Context(), in, c.Request().Header, body, s.now())
	if err == nil && key.Unused != nil {
		s.log.Warn("webhook delivery id unusable as idempotency key; deduplicating by the content's digest",
			"integration_id", in.ID, "reason", key.Unused.Error(), "request_id", requestID(c))
	}
	return key, err
}
