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

// verifyShopify checks the HMAC of the body alone (see verifyBodyHMAC).
func verifyShopify(key []byte, header http.Header, body []byte, _ time.Time) (string, error) {
	return verifyBodyHMAC(key, header, body, shopifySignatureHeader, shopifyDeliveryHeader, parseShopifySignature)
}

// parseShopifySignature decodes an X-Shopify-Hmac-SHA256 value, a base64 HMAC.
func parseShopifySignature(value string) ([]byte, error) {
	return base64MAC.decodeMAC(shopifySignatureHeader, value)
}
