package signature

import (
	"crypto/ed25519"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// referenceVectors is testdata/reference_vectors.json: inputs and expected outputs copied from the
// schemes' reference libraries and documentation, each entry naming its source.
type referenceVectors struct {
	StandardWebhooksJavaScript struct {
		Secret           string   `json:"secret"`
		UnparseableEntry string   `json:"unparseable_entry"`
		PartialEntries   []string `json:"partial_entries"`
		OtherEntries     []string `json:"other_entries"`
	} `json:"standard_webhooks_javascript"`
	StandardWebhooksAsymmetric struct {
		PrivateKeySeed   string `json:"private_key_seed"`
		WebhookID        string `json:"webhook_id"`
		WebhookTimestamp string `json:"webhook_timestamp"`
		Body             string `json:"body"`
		Signature        string `json:"signature"`
	} `json:"standard_webhooks_asymmetric"`
	StandardWebhooksPythonUnpadded struct {
		Padded   string `json:"padded"`
		Unpadded string `json:"unpadded"`
	} `json:"standard_webhooks_python_unpadded"`
	StripeGo struct {
		Secret             string   `json:"secret"`
		RolledSecretSuffix string   `json:"rolled_secret_suffix"`
		Payload            string   `json:"payload"`
		EventID            string   `json:"event_id"`
		UnreadableEntry    string   `json:"unreadable_entry"`
		MalformedHeaders   []string `json:"malformed_headers"`
		FakeSignatureBytes string   `json:"fake_signature_bytes"`
	} `json:"stripe_go"`
	GitHubDocumentedExample struct {
		Secret    string `json:"secret"`
		Payload   string `json:"payload"`
		Signature string `json:"signature"`
	} `json:"github_documented_example"`
	ShopifyLibraries struct {
		Secret string `json:"secret"`
		Body   string `json:"body"`
	} `json:"shopify_libraries"`
}

func loadReferenceVectors(t *testing.T) referenceVectors {
	t.Helper()
	var v referenceVectors
	readJSON(t, "testdata/reference_vectors.json", &v)
	return v
}

// readJSON decodes the JSON file at path into v.
func readJSON(t *testing.T, path string, v any) {
	t.Helper()
	raw, err := os.ReadFile(path)
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(raw, v))
}

// requireOutcome asserts a verification's outcome: refused as a sender's failure on wantCheck and
// header when wantCheck is set, else accepted with the delivery id wantID.
func requireOutcome(t *testing.T, id string, err error, wantCheck, header, wantID string) {
	t.Helper()
	if wantCheck != "" {
		require.Empty(t, id)
		requireVerifyError(t, err, wantCheck, header)
		return
	}
	require.NoError(t, err)
	require.Equal(t, wantID, id)
}

func TestStandardWebhooksLibrariesSkipUnparseableEntries(t *testing.T) {
	t.Parallel()
	spec := loadSWVector(t)
	js := loadReferenceVectors(t).StandardWebhooksJavaScript
	valid := spec.Valid.Headers["webhook-signature"]
	secrets := []string{js.Secret} // the JavaScript tests configure it without the whsec_ prefix

	tests := []struct {
		name      string
		signature string
		wantCheck string
	}{
		{name: "valid, then an entry that does not parse", signature: valid + " " + js.UnparseableEntry},
		{name: "an entry that does not parse, then valid", signature: js.UnparseableEntry + " " + valid},
		{name: "multi sig list", signature: strings.Join(append(js.OtherEntries, valid, js.OtherEntries[0]), " ")},
		{name: "only the entry that does not parse", signature: js.UnparseableEntry, wantCheck: CheckMalformedHeader},
		{name: "partial entries", signature: strings.Join(js.PartialEntries, " "), wantCheck: CheckMalformedHeader},
		{name: "only other entries", signature: strings.Join(js.OtherEntries, " "), wantCheck: CheckSignatureMismatch},
		{name: "other entries and garbage", signature: strings.Join(js.OtherEntries, " ") + " " + js.UnparseableEntry, wantCheck: CheckSignatureMismatch},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			header := spec.header()
			header.Set("webhook-signature", tt.signature)
			id, err := Verify(StandardWebhooks, secrets, header, []byte(spec.Valid.Body), spec.signedAt(t))
			requireOutcome(t, id, err, tt.wantCheck, swSignatureHeader, spec.Valid.Headers["webhook-id"])
		})
	}
}

func TestStandardWebhooksAsymmetricVector(t *testing.T) {
	t.Parallel()
	v := loadReferenceVectors(t).StandardWebhooksAsymmetric
	seed, err := base64.StdEncoding.DecodeString(v.PrivateKeySeed)
	require.NoError(t, err)
	public := ed25519.NewKeyFromSeed(seed).Public().(ed25519.PublicKey)
	publicSecret := "whpk_" + base64.StdEncoding.EncodeToString(public)
	require.NoError(t, ValidateSecret(StandardWebhooks, publicSecret))
	hmacSecret := loadSWVector(t).Valid.Secret
	otherPublic := ed25519.NewKeyFromSeed(make([]byte, ed25519.SeedSize)).Public().(ed25519.PublicKey)
	otherPublicSecret := "whpk_" + base64.StdEncoding.EncodeToString(otherPublic)

	signedAt := time.Unix(1614265330, 0)
	tests := []struct {
		name      string
		secrets   []string
		signature string
		body      string
		wantCheck string
	}{
		{name: "public key", secrets: []string{publicSecret}, signature: v.Signature},
		{name: "public key next to an HMAC secret", secrets: []string{hmacSecret, publicSecret}, signature: v.Signature},
		{name: "v1a after an unparseable v1", secrets: []string{publicSecret}, signature: "v1,dawfeoifkpqwoekfpqoekf " + v.Signature},
		{name: "tampered body", secrets: []string{publicSecret}, signature: v.Signature, body: v.Body + " ", wantCheck: CheckSignatureMismatch},
		{name: "another public key", secrets: []string{otherPublicSecret}, signature: v.Signature, wantCheck: CheckSignatureMismatch},
		{name: "HMAC secret only", secrets: []string{hmacSecret}, signature: v.Signature, wantCheck: CheckSignatureMismatch},
		{name: "signature labelled v1", secrets: []string{publicSecret}, signature: strings.Replace(v.Signature, "v1a,", "v1,", 1), wantCheck: CheckMalformedHeader},
		{name: "truncated", secrets: []string{publicSecret}, signature: v.Signature[:40], wantCheck: CheckMalformedHeader},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			header := http.Header{}
			header.Set("webhook-id", v.WebhookID)
			header.Set("webhook-timestamp", v.WebhookTimestamp)
			header.Set("webhook-signature", tt.signature)
			body := v.Body
			if tt.body != "" {
				body = tt.body
			}
			id, err := Verify(StandardWebhooks, tt.secrets, header, []byte(body), signedAt)
			requireOutcome(t, id, err, tt.wantCheck, swSignatureHeader, v.WebhookID)
		})
	}
}

func TestStandardWebhooksUnpaddedSecret(t *testing.T) {
	t.Parallel()
	v := loadReferenceVectors(t).StandardWebhooksPythonUnpadded
	spec := loadSWVector(t)
	require.NoError(t, ValidateSecret(StandardWebhooks, v.Unpadded))
	// A delivery signed with the padded form verifies under the unpadded one: both are one key.
	header := spec.header()
	content := spec.Valid.Headers["webhook-id"] + "." + spec.Valid.Headers["webhook-timestamp"] + "." + spec.Valid.Body
	header.Set("webhook-signature", "v1,"+base64String(testMAC(swKey(v.Padded), content)))
	for _, secret := range []string{v.Padded, v.Unpadded} {
		id, err := Verify(StandardWebhooks, []string{secret}, header, []byte(spec.Valid.Body), spec.signedAt(t))
		require.NoError(t, err, secret)
		require.Equal(t, spec.Valid.Headers["webhook-id"], id)
	}
}

func TestStripeGoVectors(t *testing.T) {
	t.Parallel()
	v := loadReferenceVectors(t).StripeGo
	rolled := v.Secret + v.RolledSecretSuffix
	body := []byte(v.Payload)
	ts := unix(testNow)
	valid := hexString(testMAC([]byte(v.Secret), ts+"."+v.Payload))
	validRolled := hexString(testMAC([]byte(rolled), ts+"."+v.Payload))
	header := "t=" + ts + ",v1=" + valid

	tests := []struct {
		name      string
		secrets   []string
		value     string
		wantCheck string
	}{
		{name: "unreadable signature ignored", secrets: []string{v.Secret}, value: header + "," + v.UnreadableEntry},
		{name: "unreadable signature first", secrets: []string{v.Secret}, value: "t=" + ts + "," + v.UnreadableEntry + ",v1=" + valid},
		{name: "rolled key, old secret", secrets: []string{v.Secret}, value: header + ",v1=" + validRolled},
		{name: "rolled key, new secret", secrets: []string{rolled}, value: header + ",v1=" + validRolled},
		{name: "rolled key, both secrets current", secrets: []string{rolled, v.Secret}, value: header},
		{name: "only the unreadable signature", secrets: []string{v.Secret}, value: "t=" + ts + "," + v.UnreadableEntry, wantCheck: CheckMalformedHeader},
		{name: "fake signature", secrets: []string{v.Secret}, value: "t=" + ts + ",v1=" + hex.EncodeToString([]byte(v.FakeSignatureBytes)), wantCheck: CheckMalformedHeader},
		{name: "v0 scheme only", secrets: []string{v.Secret}, value: "t=" + ts + ",v0=" + valid, wantCheck: CheckSignatureMismatch},
		{name: "rolled signature, unrelated secret", secrets: []string{v.Secret + "_other"}, value: header + ",v1=" + validRolled, wantCheck: CheckSignatureMismatch},
	}
	for _, value := range v.MalformedHeaders {
		tests = append(tests, struct {
			name      string
			secrets   []string
			value     string
			wantCheck string
		}{name: "malformed " + value, secrets: []string{v.Secret}, value: value, wantCheck: CheckMalformedHeader})
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			h := http.Header{}
			h.Set("Stripe-Signature", tt.value)
			id, err := Verify(Stripe, tt.secrets, h, body, testNow)
			requireOutcome(t, id, err, tt.wantCheck, stripeSignatureHeader, v.EventID)
		})
	}
}

func TestShopifyLibrarySecret(t *testing.T) {
	t.Parallel()
	v := loadReferenceVectors(t).ShopifyLibraries
	require.NoError(t, ValidateSecret(Shopify, v.Secret))
	header := http.Header{}
	header.Set("X-Shopify-Hmac-Sha256", base64String(testMAC([]byte(v.Secret), v.Body)))
	_, err := Verify(Shopify, []string{v.Secret}, header, []byte(v.Body), testNow)
	require.NoError(t, err)

	_, err = Verify(Shopify, []string{v.Secret + "!"}, header, []byte(v.Body), testNow)
	requireVerifyError(t, err, CheckSignatureMismatch, shopifySignatureHeader)
}
