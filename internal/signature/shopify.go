package signature

import (
	"net/http"
	"time"
)

// Header names documented at https://shopify.dev/docs/apps/build/webhooks/subscribe/https.
const (
	shopifySignatureHeader = "X-Shopify-Hmac-SHA256"
	shopifyDeliveryHeader  = "X-Shopify-Webhook-Id"
)

// verifyShopify checks the HMAC of the body alone. Shopify signs no timestamp, so now is unused and
// replays are caught by deduplicating on the webhook id instead.
func verifyShopify(key []byte, header http.Header, body []byte, _ time.Time) (string, error) {
	value, err := requiredHeader(header, shopifySignatureHeader)
	if err != nil {
		return "", err
	}
	mac, err := parseShopifySignature(value)
	if err != nil {
		return "", err
	}
	if err := matchAny(shopifySignatureHeader, sign(key, body), [][]byte{mac}); err != nil {
		return "", err
	}
	return header.Get(shopifyDeliveryHeader), nil
}

// parseShopifySignature decodes an X-Shopify-Hmac-SHA256 value, a base64 HMAC.
func parseShopifySignature(value string) ([]byte, error) {
	return base64MAC.decodeMAC(shopifySignatureHeader, value)
}
