package server_test

import (
	"context"
	"crypto/ed25519"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/lefia/edihub/internal/provision"
	"github.com/lefia/edihub/internal/server"
	"github.com/lefia/edihub/internal/testfactory"
)

// Secrets of the HMAC schemes.
const (
	githubSecret  = "It's a Secret to Everybody"
	stripeSecret  = "whsec_test_stripe_0123456789abcdef"
	shopifySecret = "shpss_0123456789abcdef0123456789"
)

// integration creates an integration in the bundle's production environment
// for a message type that must already exist, and returns its id.
func (b *testBundle) integration(t *testing.T, messageType, scheme, secret string) string {
	t.Helper()
	id, _ := testfactory.Integration(t, b.pool, testfactory.IntegrationOpts{
		Tenant: b.tenant, MessageType: messageType, Scheme: scheme, Secret: secret,
	})
	return id
}

// webhook posts body as JSON to an integration's webhook URL with the given
// header name/value pairs and nothing else: no API key is added.
func (b *testBundle) webhook(t *testing.T, integrationID string, body []byte, headers ...string) response {
	t.Helper()
	h := http.Header{"Content-Type": {"application/json"}}
	for i := 0; i+1 < len(headers); i += 2 {
		h.Set(headers[i], headers[i+1])
	}
	return do(t, http.MethodPost, b.url+"/api/webhook/"+integrationID, h, body)
}

// mac is the HMAC-SHA256 of the concatenated parts, computed here rather
// than by the signature package so that the tests check it independently.
func mac(key string, parts ...string) []byte {
	h := hmac.New(sha256.New, []byte(key))
	for _, p := range parts {
		h.Write([]byte(p))
	}
	return h.Sum(nil)
}

func githubHeaders(secret string, body []byte, delivery string) []string {
	h := []string{"X-Hub-Signature-256", "sha256=" + hex.EncodeToString(mac(secret, string(body)))}
	if delivery != "" {
		h = append(h, "X-GitHub-Delivery", delivery)
	}
	return h
}

func stripeHeaders(secret string, body []byte, at time.Time) []string {
	ts := strconv.FormatInt(at.Unix(), 10)
	return []string{"Stripe-Signature", "t=" + ts + ",v1=" + hex.EncodeToString(mac(secret, ts, ".", string(body)))}
}

func shopifyHeaders(secret string, body []byte, webhookID string) []string {
	h := []string{"X-Shopify-Hmac-Sha256", base64.StdEncoding.EncodeToString(mac(secret, string(body)))}
	if webhookID != "" {
		h = append(h, "X-Shopify-Webhook-Id", webhookID)
	}
	return h
}

func standardWebhooksHeaders(t *testing.T, secret string, body []byte, id string, at time.Time) []string {
	t.Helper()
	key, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(secret, "whsec_"))
	require.NoError(t, err)
	ts := strconv.FormatInt(at.Unix(), 10)
	sig := base64.StdEncoding.EncodeToString(mac(string(key), id, ".", ts, ".", string(body)))
	return []string{"webhook-id", id, "webhook-timestamp", ts, "webhook-signature", "v1," + sig}
}

// requireCreatedThenReplayed checks a first delivery's 201 and a repeat's
// 200 replay of the same answer, with one message stored.
func requireCreatedThenReplayed(t *testing.T, b *testBundle, first, again response) {
	t.Helper()
	require.Equal(t, http.StatusCreated, first.status, "%s", first.body)
	require.Empty(t, first.header.Get("Idempotent-Replayed"))
	require.Equal(t, http.StatusOK, again.status, "%s", again.body)
	require.Equal(t, "true", again.header.Get("Idempotent-Replayed"))
	require.Equal(t, first.json(t)["id"], again.json(t)["id"])
	require.Equal(t, 1, b.messages(t))
	require.Equal(t, 1, b.blockedEvents(t))
}

// contentKey is the idempotency key a delivery identified by its content
// was stored under: the digest of the canonical content of the message the
// answer names.
func contentKey(t *testing.T, b *testBundle, answer response) string {
	t.Helper()
	var key string
	require.NoError(t, b.pool.QueryRow(context.Background(),
		`SELECT 'sha256:' || encode(content_hash, 'hex') FROM messages WHERE id = $1`, answer.json(t)["id"]).Scan(&key))
	return key
}

// requireKeyStored checks that the delivery was deduplicated under key in
// scope: "" for receive-message, the integration id for webhooks.
func requireKeyStored(t *testing.T, b *testBundle, scope, key string) {
	t.Helper()
	require.Equal(t, 1, b.count(t, `SELECT count(*) FROM idempotency_keys WHERE scope = $1 AND key = $2`, scope, key))
}

func requireProblem(t *testing.T, resp response, status int, typ string) map[string]any {
	t.Helper()
	require.Equal(t, status, resp.status, "%s", resp.body)
	require.Equal(t, "application/problem+json", resp.header.Get("Content-Type"))
	p := resp.json(t)
	require.Equal(t, typ, p["type"], "%s", resp.body)
	return p
}

func TestWebhookStandardWebhooksVector(t *testing.T) {
	t.Parallel()
	var vector struct {
		Valid struct {
			Secret        string            `json:"secret"`
			Headers       map[string]string `json:"headers"`
			Body          string            `json:"body"`
			SignedContent string            `json:"signed_content"`
		} `json:"valid"`
	}
	require.NoError(t, json.Unmarshal(readFile(t, "standard_webhooks_vector.json"), &vector))
	v := vector.Valid
	signedAt, err := strconv.ParseInt(v.Headers["webhook-timestamp"], 10, 64)
	require.NoError(t, err)

	// The vector is consistent with an HMAC computed here, so a failure
	// below is the server's, not the fixture's.
	own := standardWebhooksHeaders(t, v.Secret, []byte(v.Body), v.Headers["webhook-id"], time.Unix(signedAt, 0))
	require.Equal(t, v.Headers["webhook-signature"], own[5])

	b := setup(t, server.WithClock(func() time.Time { return time.Unix(signedAt, 0) }))
	b.messageType(t, "EVENT", nil, nil)
	id := b.integration(t, "EVENT", "standard-webhooks", v.Secret)
	var headers []string
	for name, value := range v.Headers {
		headers = append(headers, name, value)
	}

	first := b.webhook(t, id, []byte(v.Body), headers...)
	again := b.webhook(t, id, []byte(v.Body), headers...)
	requireCreatedThenReplayed(t, b, first, again)
	require.Equal(t, string(first.body), string(again.body), "a replay returns the original body")
	got := first.json(t)
	require.Equal(t, "EVENT", got["message_type"])
	require.Nil(t, got["docnum"])
	requireKeyStored(t, b, id, v.Headers["webhook-id"])

	// The message is stored with its origin and the body byte for byte.
	var endpoint, integrationID, payload string
	require.NoError(t, b.pool.QueryRow(context.Background(),
		`SELECT source_endpoint, integration_id::text, payload::text FROM messages`).Scan(&endpoint, &integrationID, &payload))
	require.Equal(t, "webhook", endpoint)
	require.Equal(t, id, integrationID)
	require.Equal(t, v.Body, payload)
}

func TestWebhookGitHub(t *testing.T) {
	t.Parallel()
	// GitHub's documented example: this secret signs "Hello, World!" as below.
	require.Equal(t, "757107ea0eb2509fc211221cce984b8a37570b6d7586c22c46f4379c8b043e17",
		hex.EncodeToString(mac(githubSecret, "Hello, World!")))

	b := setup(t)
	b.messageType(t, "GH_EVENT", nil, nil)
	id := b.integration(t, "GH_EVENT", "github", githubSecret)
	body := []byte(`{"action":"opened","number":1,"repository":{"full_name":"octo/hello"}}`)
	delivery := "72d3162e-cc78-11e3-81ab-4c9367dc0958"

	first := b.webhook(t, id, body, githubHeaders(githubSecret, body, delivery)...)
	// GitHub signs only the body, so the body's content is the delivery's
	// identity: JSON that differs only in whitespace and member order is the
	// same content, and so the same delivery.
	redelivered := []byte(`{ "number": 1, "action": "opened", "repository": { "full_name": "octo/hello" } }`)
	again := b.webhook(t, id, redelivered, githubHeaders(githubSecret, redelivered, delivery)...)
	requireCreatedThenReplayed(t, b, first, again)
	requireKeyStored(t, b, id, contentKey(t, b, first))

	// The unsigned delivery id decides nothing: other content under it is
	// another delivery.
	changed := []byte(`{"action":"closed","number":1,"repository":{"full_name":"octo/hello"}}`)
	require.Equal(t, http.StatusCreated, b.webhook(t, id, changed, githubHeaders(githubSecret, changed, delivery)...).status)
	require.Equal(t, 2, b.messages(t))
}

func TestWebhookStripe(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.messageType(t, "STRIPE_EVENT", nil, nil)
	id := b.integration(t, "STRIPE_EVENT", "stripe", stripeSecret)
	body := []byte(`{"id":"evt_1NG8Du2eZvKYlo2CUI79vXWy","object":"event","type":"payment_intent.succeeded"}`)

	first := b.webhook(t, id, body, stripeHeaders(stripeSecret, body, time.Now())...)
	// Stripe signs each retry afresh; the event id in the body stays.
	again := b.webhook(t, id, body, stripeHeaders(stripeSecret, body, time.Now().Add(time.Second))...)
	requireCreatedThenReplayed(t, b, first, again)
	requireKeyStored(t, b, id, "evt_1NG8Du2eZvKYlo2CUI79vXWy")
}

func TestWebhookShopify(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.messageType(t, "SHOP_ORDER", nil, nil)
	id := b.integration(t, "SHOP_ORDER", "shopify", shopifySecret)
	body := []byte(`{"id":4500012345,"email":"jon@example.com","total_price":"199.00"}`)
	webhookID := "b54557e4-bdd9-4b37-8a5f-bf7d70bcd043"

	first := b.webhook(t, id, body, shopifyHeaders(shopifySecret, body, webhookID)...)
	again := b.webhook(t, id, body, shopifyHeaders(shopifySecret, body, webhookID)...)
	requireCreatedThenReplayed(t, b, first, again)
	requireKeyStored(t, b, id, contentKey(t, b, first))
}

func TestWebhookBearer(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.messageType(t, "SHOP_ORDER", nil, nil)
	id := b.integration(t, "SHOP_ORDER", "bearer", "")
	body := []byte(`{"order":"A-1"}`)

	first := b.webhook(t, id, body, "Authorization", "Bearer "+b.apiKey, "Idempotency-Key", "delivery-1")
	again := b.webhook(t, id, body, "Authorization", "Bearer "+b.apiKey, "Idempotency-Key", "delivery-1")
	requireCreatedThenReplayed(t, b, first, again)
	requireKeyStored(t, b, id, "delivery-1")

	// A key of another environment of the same tenant is valid for
	// receive-message there, but may not write into this integration.
	testfactory.Environment(t, b.pool, &testfactory.EnvironmentOpts{Tenant: b.tenant, Slug: "sandbox"})
	sandboxKey := testfactory.APIKey(t, b.pool, &testfactory.APIKeyOpts{Tenant: b.tenant, Environment: "sandbox"})
	p := requireProblem(t, b.webhook(t, id, body, "Authorization", "Bearer "+sandboxKey), http.StatusUnauthorized, "unauthorized")
	require.Contains(t, p["detail"], "environment")
	requireProblem(t, b.webhook(t, id, body), http.StatusUnauthorized, "unauthorized")
	requireProblem(t, b.webhook(t, id, body, "Authorization", "Bearer edh_wrong"), http.StatusUnauthorized, "unauthorized")
	require.Equal(t, 1, b.messages(t))
}

// swSecret is the tests' Standard Webhooks secret.
var swSecret = "whsec_" + base64.StdEncoding.EncodeToString([]byte("0123456789abcdef0123456789abcdef"))

// signedIntegrations creates one integration of each signing scheme, each
// for a message type of its own, with the tests' secrets, and returns
// their ids.
func (b *testBundle) signedIntegrations(t *testing.T) (github, stripe, sw, shopify string) {
	t.Helper()
	for _, code := range []string{"GH_EVENT", "STRIPE_EVENT", "SW_EVENT", "SHOP_ORDER"} {
		b.messageType(t, code, nil, nil)
	}
	return b.integration(t, "GH_EVENT", "github", githubSecret), b.integration(t, "STRIPE_EVENT", "stripe", stripeSecret),
		b.integration(t, "SW_EVENT", "standard-webhooks", swSecret), b.integration(t, "SHOP_ORDER", "shopify", shopifySecret)
}

func TestWebhookRejectsBadSignatures(t *testing.T) {
	t.Parallel()
	b := setup(t)
	github, stripe, sw, shopify := b.signedIntegrations(t)
	body := []byte(`{"id":"evt_1","amount":100}`)
	tampered := []byte(`{"id":"evt_1","amount":999}`)
	stale := time.Now().Add(-10 * time.Minute)

	tests := []struct {
		name        string
		integration string
		body        []byte
		headers     []string
		check       string
	}{
		{"github tampered body", github, tampered, githubHeaders(githubSecret, body, "d1"), "signature_mismatch"},
		{"github wrong secret", github, body, githubHeaders("another secret of enough length", body, "d1"), "signature_mismatch"},
		{"github missing header", github, body, []string{"X-GitHub-Delivery", "d1"}, "missing_header"},
		{"github malformed header", github, body, []string{"X-Hub-Signature-256", "md5=abc"}, "malformed_header"},
		{"stripe stale timestamp", stripe, body, stripeHeaders(stripeSecret, body, stale), "timestamp_out_of_tolerance"},
		{"stripe tampered body", stripe, tampered, stripeHeaders(stripeSecret, body, time.Now()), "signature_mismatch"},
		{"standard webhooks stale timestamp", sw, body, standardWebhooksHeaders(t, swSecret, body, "msg_1", stale), "timestamp_out_of_tolerance"},
		{"standard webhooks missing headers", sw, body, nil, "missing_header"},
		{"shopify wrong secret", shopify, body, shopifyHeaders("another secret of enough length", body, "w1"), "signature_mismatch"},
		{"shopify missing header", shopify, body, []string{"X-Shopify-Webhook-Id", "w1"}, "missing_header"},
		{"invalid json with a bad signature", github, []byte(`{"id":`), githubHeaders(githubSecret, body, ""), "signature_mismatch"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := requireProblem(t, b.webhook(t, tt.integration, tt.body, tt.headers...), http.StatusUnauthorized, "invalid-signature")
			require.Contains(t, p["detail"], tt.check)
		})
	}
	require.Equal(t, 0, b.messages(t))
	require.Equal(t, 0, b.count(t, `SELECT count(*) FROM idempotency_keys`))
}

// A delivery that does not prove its sender is 401 whatever its media type:
// the signature is checked before the Content-Type, so that a form-encoded
// body with a bad Shopify HMAC is not told 415. Signed correctly, the same
// body is 415.
func TestWebhookSignatureBeforeContentType(t *testing.T) {
	t.Parallel()
	b := setup(t)
	github, stripe, sw, shopify := b.signedIntegrations(t)
	form := []byte("id=evt_1&amount=100")
	wrong := "another secret of enough length"
	now := time.Now()
	schemes := []struct {
		name, id      string
		signed, badly []string
	}{
		{"github", github, githubHeaders(githubSecret, form, "d1"), githubHeaders(wrong, form, "d1")},
		{"stripe", stripe, stripeHeaders(stripeSecret, form, now), stripeHeaders(wrong, form, now)},
		{"shopify", shopify, shopifyHeaders(shopifySecret, form, "w1"), shopifyHeaders(wrong, form, "w1")},
		{"standard webhooks", sw, standardWebhooksHeaders(t, swSecret, form, "msg_1", now),
			standardWebhooksHeaders(t, "whsec_"+base64.StdEncoding.EncodeToString([]byte(wrong)), form, "msg_1", now)},
	}
	for _, s := range schemes {
		for _, contentType := range []string{"application/x-www-form-urlencoded", "text/plain", ""} {
			post := func(headers []string) response {
				h := http.Header{}
				if contentType != "" {
					h.Set("Content-Type", contentType)
				}
				for i := 0; i+1 < len(headers); i += 2 {
					h.Set(headers[i], headers[i+1])
				}
				return do(t, http.MethodPost, b.url+"/api/webhook/"+s.id, h, form)
			}
			p := requireProblem(t, post(s.badly), http.StatusUnauthorized, "invalid-signature")
			require.Contains(t, p["detail"], "signature_mismatch", "%s %q", s.name, contentType)
			p = requireProblem(t, post(nil), http.StatusUnauthorized, "invalid-signature")
			require.Contains(t, p["detail"], "missing_header", "%s %q", s.name, contentType)
			requireProblem(t, post(s.signed), http.StatusUnsupportedMediaType, "unsupported-media-type")
		}
	}
	require.Equal(t, 0, b.messages(t))
}

// The timestamped schemes take their integration's tolerance: a signing
// time at its edge, old or in the future, is accepted, a second past it is
// refused; an integration created without one has 5 minutes.
func TestWebhookToleranceIsTheIntegrations(t *testing.T) {
	t.Parallel()
	now := time.Unix(1_767_225_600, 0)
	b := setup(t, server.WithClock(func() time.Time { return now }))
	b.messageType(t, "STRIPE_EVENT", nil, nil)
	b.messageType(t, "SW_EVENT", nil, nil)
	integration := func(code, scheme, secret string, tolerance time.Duration) string {
		id, _ := testfactory.Integration(t, b.pool, testfactory.IntegrationOpts{
			Tenant: b.tenant, MessageType: code, Scheme: scheme, Secret: secret, Tolerance: tolerance,
		})
		return id
	}
	stripe := integration("STRIPE_EVENT", "stripe", stripeSecret, 10*time.Second)
	sw := integration("SW_EVENT", "standard-webhooks", swSecret, 10*time.Second)
	swDefault := integration("SW_EVENT", "standard-webhooks", swSecret, 0)

	n := 0
	deliver := func(id string, offset time.Duration) response {
		n++
		body := fmt.Appendf(nil, `{"id":"evt_%d"}`, n)
		headers := stripeHeaders(stripeSecret, body, now.Add(offset))
		if id != stripe {
			headers = standardWebhooksHeaders(t, swSecret, body, fmt.Sprintf("msg_%d", n), now.Add(offset))
		}
		return b.webhook(t, id, body, headers...)
	}
	for _, tt := range []struct {
		integration string
		edge        time.Duration
	}{{stripe, 10 * time.Second}, {sw, 10 * time.Second}, {swDefault, 5 * time.Minute}} {
		for _, offset := range []time.Duration{-tt.edge, tt.edge} {
			r := deliver(tt.integration, offset)
			require.Equal(t, http.StatusCreated, r.status, "signed %s from now: %s", offset, r.body)
		}
		for _, offset := range []time.Duration{-tt.edge - time.Second, tt.edge + time.Second} {
			p := requireProblem(t, deliver(tt.integration, offset), http.StatusUnauthorized, "invalid-signature")
			require.Contains(t, p["detail"], "timestamp_out_of_tolerance")
			require.Contains(t, p["detail"], tt.edge.String()+" tolerance")
		}
	}
	require.Equal(t, 6, b.messages(t))
}

// A bearer delivery without an Idempotency-Key is deduplicated by the
// message type's paths, as on receive-message.
func TestWebhookBearerFingerprint(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.messageType(t, "SHOP_ORDER", []string{"id"}, nil)
	id := b.integration(t, "SHOP_ORDER", "bearer", "")
	auth := []string{"Authorization", "Bearer " + b.apiKey}
	body := []byte(`{"id":4500012345,"total_price":"199.00"}`)
	changed := []byte(`{"id":4500012345,"total_price":"249.00"}`)

	first := b.webhook(t, id, body, auth...)
	again := b.webhook(t, id, changed, auth...)
	requireCreatedThenReplayed(t, b, first, again)
	got := again.json(t)
	require.Equal(t, true, got["duplicate"])
	require.Equal(t, first.json(t)["id"], got["duplicate_of"])
	require.NotNil(t, got["fingerprint"])
	require.Equal(t, 0, b.count(t, `SELECT count(*) FROM idempotency_keys`))

	other := []byte(`{"id":4500012346,"total_price":"199.00"}`)
	require.Equal(t, http.StatusCreated, b.webhook(t, id, other, auth...).status)
}

// A validly signed delivery whose signed id cannot be an idempotency key is
// deduplicated by its content instead of being refused.
func TestWebhookUnusableDeliveryIDFallsBackToContent(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.messageType(t, "EVENT", nil, nil)
	swSecret := "whsec_" + base64.StdEncoding.EncodeToString([]byte("a key of twenty-four by"))
	id := b.integration(t, "EVENT", "standard-webhooks", swSecret)
	body := []byte(`{"id":42}`)
	headers := standardWebhooksHeaders(t, swSecret, body, strings.Repeat("d", 256), time.Now())

	first := b.webhook(t, id, body, headers...)
	again := b.webhook(t, id, body, headers...)
	requireCreatedThenReplayed(t, b, first, again)
	requireKeyStored(t, b, id, contentKey(t, b, first))
}

// A captured delivery sent again is a duplicate, however its unsigned
// headers were changed: on the timestamped schemes within the tolerance
// (after it the signature is refused), with a new Idempotency-Key; on
// GitHub and Shopify at any time within the message type's window, with a
// new delivery id.
func TestWebhookReplayIsBlocked(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.messageType(t, "EVENT", nil, ptr(2))
	swSecret := "whsec_" + base64.StdEncoding.EncodeToString([]byte("a key of twenty-four by"))
	body := []byte(`{"id":"evt_replayed","object":"event","amount":100}`)
	now := time.Now()
	tests := []struct {
		scheme, secret string
		captured       []string
		replayed       []string
	}{
		{"standard-webhooks", swSecret, standardWebhooksHeaders(t, swSecret, body, "msg_captured", now),
			append(standardWebhooksHeaders(t, swSecret, body, "msg_captured", now), "Idempotency-Key", "fresh-key")},
		{"stripe", stripeSecret, stripeHeaders(stripeSecret, body, now),
			append(stripeHeaders(stripeSecret, body, now), "Idempotency-Key", "fresh-key")},
		{"github", githubSecret, githubHeaders(githubSecret, body, "d-captured"),
			append(githubHeaders(githubSecret, body, uuid.NewString()), "Idempotency-Key", "fresh-key")},
		{"shopify", shopifySecret, shopifyHeaders(shopifySecret, body, "w-captured"),
			shopifyHeaders(shopifySecret, body, uuid.NewString())},
	}
	for _, tt := range tests {
		id := b.integration(t, "EVENT", tt.scheme, tt.secret)
		first := b.webhook(t, id, body, tt.captured...)
		require.Equal(t, http.StatusCreated, first.status, "%s: %s", tt.scheme, first.body)
		replay := b.webhook(t, id, body, tt.replayed...)
		require.Equal(t, http.StatusOK, replay.status, "%s: %s", tt.scheme, replay.body)
		require.Equal(t, "true", replay.header.Get("Idempotent-Replayed"), tt.scheme)
		require.Equal(t, first.json(t)["id"], replay.json(t)["id"], tt.scheme)
		require.Equal(t, 0, b.count(t, `SELECT count(*) FROM idempotency_keys WHERE key = 'fresh-key'`), tt.scheme)
	}
	require.Equal(t, 4, b.messages(t))

	// A content key lasts the message type's window (2 hours here), not
	// IDEMPOTENCY_KEY_TTL; once it is over, the same body is new again.
	var expires time.Time
	require.NoError(t, b.pool.QueryRow(context.Background(),
		`SELECT max(expires_at) FROM idempotency_keys WHERE key LIKE 'sha256:%'`).Scan(&expires))
	require.WithinDuration(t, time.Now().Add(2*time.Hour), expires, time.Minute)
	_, err := b.pool.Exec(context.Background(), `UPDATE idempotency_keys SET expires_at = now() - interval '1 second'`)
	require.NoError(t, err)
	github := b.integration(t, "EVENT", "github", githubSecret)
	require.Equal(t, http.StatusCreated, b.webhook(t, github, body, githubHeaders(githubSecret, body, "")...).status)
	require.Equal(t, http.StatusOK, b.webhook(t, github, body, githubHeaders(githubSecret, body, "")...).status)
	require.Equal(t, 5, b.messages(t))
}

// An explicit Idempotency-Key on the webhook endpoint is scoped to the
// integration: the same key on receive-message, or on another bearer
// integration, names another request.
func TestWebhookExplicitKeyScopedToIntegration(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.messageType(t, "ORDERS05", nil, nil)
	one := b.integration(t, "ORDERS05", "bearer", "")
	two := b.integration(t, "ORDERS05", "bearer", "")
	auth := []string{"Authorization", "Bearer " + b.apiKey, "Idempotency-Key", "shared"}
	require.Equal(t, http.StatusCreated,
		b.post(t, []byte(`{"message_type":"ORDERS05","docnum":"1","payload":{"a":1}}`), "Idempotency-Key", "shared").status)
	require.Equal(t, http.StatusCreated, b.webhook(t, one, []byte(`{"b":1}`), auth...).status)
	require.Equal(t, http.StatusCreated, b.webhook(t, two, []byte(`{"c":1}`), auth...).status)
	require.Equal(t, 3, b.messages(t))
	requireKeyStored(t, b, "", "shared")
	requireKeyStored(t, b, one, "shared")
	requireKeyStored(t, b, two, "shared")

	// An explicit key is validated as on receive-message.
	requireProblem(t, b.webhook(t, one, []byte(`{"b":1}`), "Authorization", "Bearer "+b.apiKey, "Idempotency-Key", "schlüssel"),
		http.StatusBadRequest, "invalid-idempotency-key")
}

func TestWebhookUnknownIntegration(t *testing.T) {
	t.Parallel()
	b := setup(t)
	for _, id := range []string{uuid.NewString(), "not-a-uuid"} {
		p := requireProblem(t, b.webhook(t, id, []byte(`{}`)), http.StatusNotFound, "not-found")
		require.Contains(t, p["detail"], "does not exist")
		// The integration is looked up before the body is looked at.
		resp := do(t, http.MethodPost, b.url+"/api/webhook/"+id, http.Header{"Content-Type": {"text/plain"}}, []byte("x"))
		requireProblem(t, resp, http.StatusNotFound, "not-found")
	}
}

// Once the signature holds, the body must be a JSON document.
func TestWebhookBodyErrors(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.messageType(t, "GH_EVENT", nil, nil)
	id := b.integration(t, "GH_EVENT", "github", githubSecret)

	for name, body := range map[string][]byte{
		"invalid json":  []byte(`{"action":`),
		"invalid utf-8": []byte("\"caf\xe9\""),
	} {
		p := requireProblem(t, b.webhook(t, id, body, githubHeaders(githubSecret, body, "d-"+name)...),
			http.StatusBadRequest, "malformed-json")
		require.Contains(t, p["detail"], "not valid", name)
	}

	body := []byte(`{"action":"opened"}`)
	h := http.Header{"Content-Type": {"text/plain"}}
	for i, hs := 0, githubHeaders(githubSecret, body, "d1"); i < len(hs); i += 2 {
		h.Set(hs[i], hs[i+1])
	}
	requireProblem(t, do(t, http.MethodPost, b.url+"/api/webhook/"+id, h, body),
		http.StatusUnsupportedMediaType, "unsupported-media-type")

	// Any JSON value is an event, not only an object.
	scalar := []byte(`42`)
	require.Equal(t, http.StatusCreated, b.webhook(t, id, scalar, githubHeaders(githubSecret, scalar, "d2")...).status)
	require.Equal(t, 1, b.messages(t))
}

// An IDoc sent as a webhook keeps the docnum of its control record.
func TestWebhookDetectsIDocDocnum(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.messageType(t, "ORDERS05", []string{"*.IDOC.E1EDK01.BELNR"}, nil)
	id := b.integration(t, "ORDERS05", "github", githubSecret)
	body := readFile(t, "orders05.json")
	resp := b.webhook(t, id, body, githubHeaders(githubSecret, body, "")...)
	require.Equal(t, http.StatusCreated, resp.status, "%s", resp.body)
	require.Equal(t, "0000000000900101", resp.json(t)["docnum"])
}

// An integration whose secret is unusable is the operator's problem, not the
// sender's: 500, logged, never a 401 that blames the signature.
func TestWebhookMisconfiguredIntegration(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.messageType(t, "GH_EVENT", nil, nil)
	id := b.integration(t, "GH_EVENT", "github", githubSecret)
	// Surrounding whitespace is refused when a secret is configured, so
	// only a row changed behind the application's back can hold it.
	_, err := b.pool.Exec(context.Background(), `UPDATE integration_secrets SET secret = ' padded ' WHERE integration_id = $1`, id)
	require.NoError(t, err)
	body := []byte(`{}`)
	p := requireProblem(t, b.webhook(t, id, body, githubHeaders(" padded ", body, "d1")...),
		http.StatusInternalServerError, "internal-error")
	require.NotContains(t, p["detail"], "padded")
}

func TestWebhookConcurrentDeliveries(t *testing.T) {
	t.Parallel()
	const deliveries = 50
	b := setup(t)
	b.messageType(t, "GH_EVENT", nil, nil)
	id := b.integration(t, "GH_EVENT", "github", githubSecret)
	body := []byte(`{"action":"opened","number":7}`)
	headers := githubHeaders(githubSecret, body, "race-delivery")

	requireOneStored(t, b, sendConcurrently(deliveries, func() response {
		return b.webhook(t, id, body, headers...)
	}))
}

func TestWebhookDuplicateAuditEvent(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.messageType(t, "SHOP_ORDER", nil, nil)
	id := b.integration(t, "SHOP_ORDER", "shopify", shopifySecret)
	body := []byte(`{"id":1}`)
	first := b.webhook(t, id, body, shopifyHeaders(shopifySecret, body, "w-1")...)
	again := b.webhook(t, id, body, shopifyHeaders(shopifySecret, body, "w-1")...)
	requireCreatedThenReplayed(t, b, first, again)

	var actor, matchKey string
	var messageID int64
	var raw []byte
	require.NoError(t, b.pool.QueryRow(context.Background(),
		`SELECT actor, match_key, message_id, details FROM audit_events WHERE action = 'message.duplicate_blocked'`).
		Scan(&actor, &matchKey, &messageID, &raw))
	require.Equal(t, "integration:"+id, actor)
	key := contentKey(t, b, first)
	require.Equal(t, key, matchKey)
	require.Equal(t, int64(first.json(t)["id"].(float64)), messageID)
	var d map[string]any
	require.NoError(t, json.Unmarshal(raw, &d))
	require.Equal(t, "idempotency_key", d["mode"])
	require.Equal(t, key, d["idempotency_key"])
	require.Equal(t, "identical", d["content"])
	require.Equal(t, map[string]any{"endpoint": "webhook", "integration_id": id, "remote_addr": "127.0.0.1",
		"request_id": again.header.Get("X-Request-Id")}, d["source"])
}

// A signature header holding a valid signature next to entries that do not
// parse is accepted, as the schemes' reference libraries accept it; one
// holding nothing that verifies is refused and stores nothing.
func TestWebhookSkipsUnparseableSignatureEntries(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.messageType(t, "EVENT", nil, nil)
	swSecret := "whsec_" + base64.StdEncoding.EncodeToString([]byte("a key of twenty-four by"))
	sw := b.integration(t, "EVENT", "standard-webhooks", swSecret)
	stripe := b.integration(t, "EVENT", "stripe", stripeSecret)
	now := time.Now()

	body := []byte(`{"type":"order.created"}`)
	h := standardWebhooksHeaders(t, swSecret, body, "msg_skip", now)
	valid := h[len(h)-1]
	h[len(h)-1] = valid + " v1,dawfeoifkpqwoekfpqoekf"
	require.Equal(t, http.StatusCreated, b.webhook(t, sw, body, h...).status)
	h[len(h)-1] = "v1,dawfeoifkpqwoekfpqoekf"
	requireProblem(t, b.webhook(t, sw, []byte(`{"type":"other"}`), h...), http.StatusUnauthorized, "invalid-signature")

	event := []byte(`{"id":"evt_skip","object":"event"}`)
	s := stripeHeaders(stripeSecret, event, now)
	require.Equal(t, http.StatusCreated, b.webhook(t, stripe, event, s[0], s[1]+",v1=bad_signature").status)
	ts := strconv.FormatInt(now.Unix(), 10)
	requireProblem(t, b.webhook(t, stripe, []byte(`{"id":"evt_other"}`), s[0], "t="+ts+",v1=bad_signature"),
		http.StatusUnauthorized, "invalid-signature")
	require.Equal(t, 2, b.messages(t))
}

// A Standard Webhooks integration configured with the sender's whpk_ public
// key accepts v1a ed25519 signatures and refuses a tampered body.
func TestWebhookStandardWebhooksEd25519(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.messageType(t, "EVENT", nil, nil)
	private := ed25519.NewKeyFromSeed([]byte("an ed25519 seed of 32 bytes ...."))
	public := "whpk_" + base64.StdEncoding.EncodeToString(private.Public().(ed25519.PublicKey))
	id := b.integration(t, "EVENT", "standard-webhooks", public)

	body := []byte(`{"type":"invoice.paid"}`)
	ts := strconv.FormatInt(time.Now().Unix(), 10)
	sig := base64.StdEncoding.EncodeToString(ed25519.Sign(private, []byte("msg_ed."+ts+"."+string(body))))
	headers := []string{"webhook-id", "msg_ed", "webhook-timestamp", ts, "webhook-signature", "v1a," + sig}
	require.Equal(t, http.StatusCreated, b.webhook(t, id, body, headers...).status)
	requireProblem(t, b.webhook(t, id, []byte(`{"type":"invoice.void"}`), headers...), http.StatusUnauthorized, "invalid-signature")
	require.Equal(t, 1, b.messages(t))
}

// A sender rotating its secret: after the new secret is added with a grace
// period, deliveries signed with either verify; once the old secret has
// expired only the new one does. Neither secret is written to the audit
// trail.
func TestWebhookSecretRotation(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.messageType(t, "GH_EVENT", nil, nil)
	id := b.integration(t, "GH_EVENT", "github", githubSecret)
	ctx := context.Background()
	deliver := func(secret, body string) response {
		return b.webhook(t, id, []byte(body), githubHeaders(secret, []byte(body), "")...)
	}
	require.Equal(t, http.StatusCreated, deliver(githubSecret, `{"n":1}`).status)

	const newSecret = "the rotated secret"
	prov := provision.New(b.pool)
	added, err := prov.AddIntegrationSecret(ctx, provision.ByCLI, id, newSecret, time.Hour)
	require.NoError(t, err)
	require.Equal(t, newSecret, added)
	require.Equal(t, http.StatusCreated, deliver(githubSecret, `{"n":2}`).status, "the old secret is current during the grace period")
	require.Equal(t, http.StatusCreated, deliver(newSecret, `{"n":3}`).status)
	var until time.Time
	require.NoError(t, b.pool.QueryRow(ctx,
		`SELECT expires_at FROM integration_secrets WHERE integration_id = $1 AND expires_at IS NOT NULL`, id).Scan(&until))
	require.WithinDuration(t, time.Now().Add(time.Hour), until, time.Minute)

	// The grace period is over.
	_, err = b.pool.Exec(ctx, `UPDATE integration_secrets SET expires_at = now() - interval '1 second' WHERE expires_at IS NOT NULL`)
	require.NoError(t, err)
	requireProblem(t, deliver(githubSecret, `{"n":4}`), http.StatusUnauthorized, "invalid-signature")
	require.Equal(t, http.StatusCreated, deliver(newSecret, `{"n":5}`).status)

	// A rotation without grace retires the current secret at once; a
	// generated secret is returned to be shown once.
	generated, err := prov.AddIntegrationSecret(ctx, provision.ByCLI, id, "", 0)
	require.NoError(t, err)
	require.Regexp(t, `^[0-9a-f]{64}$`, generated)
	requireProblem(t, deliver(newSecret, `{"n":6}`), http.StatusUnauthorized, "invalid-signature")
	require.Equal(t, http.StatusCreated, deliver(generated, `{"n":7}`).status)
	require.Equal(t, 5, b.messages(t))

	var details string
	require.NoError(t, b.pool.QueryRow(ctx,
		`SELECT string_agg(details::text, ' ') FROM audit_events WHERE action = 'integration.secret_added'`).Scan(&details))
	require.Contains(t, details, id)
	for _, secret := range []string{githubSecret, newSecret, generated} {
		require.NotContains(t, details, secret)
	}
}

func TestAddIntegrationSecretRefusals(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.messageType(t, "EVENT", nil, nil)
	ctx := context.Background()
	sw := b.integration(t, "EVENT", "standard-webhooks", "")
	bearer := b.integration(t, "EVENT", "bearer", "")

	prov := provision.New(b.pool)
	_, err := prov.AddIntegrationSecret(ctx, provision.ByCLI, sw, "whsec_!!!", time.Hour)
	require.ErrorContains(t, err, "base64")
	_, err = prov.AddIntegrationSecret(ctx, provision.ByCLI, sw, "", -time.Second)
	require.ErrorContains(t, err, "grace period must be from 0")
	_, err = prov.AddIntegrationSecret(ctx, provision.ByCLI, bearer, "", time.Hour)
	require.ErrorContains(t, err, "API keys")
	_, err = prov.AddIntegrationSecret(ctx, provision.ByCLI, "3f1c2d4e-0000-4000-8000-000000000000", "", time.Hour)
	require.ErrorContains(t, err, "there is no integration")
	// Nothing was changed by the refusals.
	require.Equal(t, 1, b.count(t, `SELECT count(*) FROM integration_secrets WHERE integration_id = $1 AND expires_at IS NULL`, sw))
	require.Equal(t, 0, b.count(t, `SELECT count(*) FROM integration_secrets WHERE integration_id = $1`, bearer))
}
