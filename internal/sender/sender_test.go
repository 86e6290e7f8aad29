package sender_test

import (
	"context"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/lefia/edihub/internal/apperr"
	"github.com/lefia/edihub/internal/ingest"
	"github.com/lefia/edihub/internal/pgtest"
	"github.com/lefia/edihub/internal/sender"
	"github.com/lefia/edihub/internal/signature"
	"github.com/lefia/edihub/internal/testfactory"
)

func requireProblem(t *testing.T, err error, kind apperr.Kind, typ string) {
	t.Helper()
	ae, ok := apperr.As(err)
	require.True(t, ok, "an error for the sender, not %v", err)
	require.Equal(t, kind, ae.Kind)
	require.Equal(t, typ, ae.Type)
}

func TestAPIKeyWithTypesNamesTheTenantsTypes(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool := pgtest.Pool(t)
	_, env := testfactory.TenantWithEnvironment(t, pool, "acme")
	mt := testfactory.MessageType(t, pool, nil)
	testfactory.TenantWithEnvironment(t, pool, "globex")
	testfactory.MessageType(t, pool, &testfactory.MessageTypeOpts{Tenant: "globex", Code: "INVOIC02"})
	key := testfactory.APIKey(t, pool, nil)
	senders := sender.New(pool, 0)

	who, err := senders.APIKeyWithTypes(ctx, key)
	require.NoError(t, err)
	require.Equal(t, env.TenantID, who.TenantID)
	require.Equal(t, env.ID, who.EnvironmentID)
	require.Equal(t, "api_key:"+strconv.FormatInt(who.APIKeyID, 10), who.Actor())
	got, err := who.MessageType(ctx, mt.Code)
	require.NoError(t, err)
	require.Equal(t, mt.ID, got.ID)
	_, err = who.MessageType(ctx, "INVOIC02")
	requireProblem(t, err, apperr.Unprocessable, "unknown-message-type")

	_, err = senders.APIKeyWithTypes(ctx, key+"x")
	require.ErrorIs(t, err, sender.ErrBadAPIKey)
	_, err = senders.APIKey(ctx, key+"x")
	require.ErrorIs(t, err, sender.ErrBadAPIKey)
}

func TestIntegrationComesWithItsTypeAndKeysItsDeliveries(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool := pgtest.Pool(t)
	testfactory.TenantWithEnvironment(t, pool, "acme")
	testfactory.Environment(t, pool, &testfactory.EnvironmentOpts{Slug: "sandbox"})
	mt := testfactory.MessageType(t, pool, nil)
	id, _ := testfactory.Integration(t, pool, testfactory.IntegrationOpts{Scheme: "bearer"})
	senders := sender.New(pool, 0)

	for _, unknown := range []string{"not-a-uuid", "7d5c2a8e-8f1e-4a57-9b1a-3d6f0c2b1e4f"} {
		_, err := senders.Integration(ctx, unknown)
		requireProblem(t, err, apperr.NotFound, "not-found")
	}
	in, err := senders.Integration(ctx, id)
	require.NoError(t, err)
	require.True(t, in.Bearer())
	require.Equal(t, mt.ID, in.MessageType.ID)

	require.NoError(t, senders.AuthenticateBearer(ctx, in, testfactory.APIKey(t, pool, nil)))
	sandboxKey := testfactory.APIKey(t, pool, &testfactory.APIKeyOpts{Environment: "sandbox"})
	requireProblem(t, senders.AuthenticateBearer(ctx, in, sandboxKey), apperr.Unauthorized, "unauthorized")

	req := in.Request(sender.BearerKey("order-1"), "42", []byte(`{}`), ingest.Source{RemoteAddr: "192.0.2.1"})
	require.Equal(t, "order-1", req.IdempotencyKey)
	require.Equal(t, id, req.KeyScope, "an integration's keys are its own")
	require.Equal(t, ingest.EndpointWebhook, req.Source.Endpoint)
	require.Equal(t, "integration:"+id, req.Source.Actor)
	require.Equal(t, mt.Code, req.MessageType.Code)
}

func TestVerifyKeysBySignedIDOrContent(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool := pgtest.Pool(t)
	testfactory.TenantWithEnvironment(t, pool, "acme")
	testfactory.MessageType(t, pool, nil)
	id, secret := testfactory.Integration(t, pool, testfactory.IntegrationOpts{Scheme: string(signature.StandardWebhooks)})
	senders := sender.New(pool, 0)
	in, err := senders.Integration(ctx, id)
	require.NoError(t, err)

	now := time.Now()
	body := []byte(`{"IDOC":{}}`)
	signed := func(deliveryID string) http.Header {
		sig, err := signature.SignStandardWebhooks(secret, deliveryID, now.Unix(), body)
		require.NoError(t, err)
		return http.Header{
			"Webhook-Id": {deliveryID}, "Webhook-Timestamp": {strconv.FormatInt(now.Unix(), 10)}, "Webhook-Signature": {sig},
		}
	}

	key, err := senders.Verify(ctx, in, signed("msg_1"), body, now)
	require.NoError(t, err)
	req := in.Request(key, "", body, ingest.Source{})
	require.Equal(t, "msg_1", req.IdempotencyKey)
	require.False(t, req.KeyIsContent)
	require.NoError(t, key.Unused)

	// A signed id the key table cannot hold: the content is the key.
	key, err = senders.Verify(ctx, in, signed(strings.Repeat("x", 300)), body, now)
	require.NoError(t, err)
	req = in.Request(key, "", body, ingest.Source{})
	require.True(t, req.KeyIsContent)
	require.Empty(t, req.IdempotencyKey)
	require.Error(t, key.Unused)

	tampered := signed("msg_2")
	tampered.Set("Webhook-Id", "msg_3")
	_, err = senders.Verify(ctx, in, tampered, body, now)
	requireProblem(t, err, apperr.Unauthorized, "invalid-signature")
}
