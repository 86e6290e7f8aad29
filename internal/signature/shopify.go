package signature

import (
	"net/http"
	"time"
)

// shopifySignatureHeader is documented at https://shopify.dev/docs/apps/build/webhooks/subscribe/https.
const shopifySignatureHeader = "X-Shopify-Hmac-SHA256"

// verifyShopify checks the HMAC of the body alone (see verifyBodyHMAC).
func verifyShopify(keys []key, header http.Header, body []byte, _ time.Time, _ time.Duration) (string, error) {
	return verifyBodyHMAC(keys, header, body, shopifySignatureHeader, parseShopifySignature)
}

// parseShopifySignature decodes an X-Shopify-Hmac-SHA256 value, a base64 HMAC.
func parseShopifySignature(value string) ([]byte, error) {
	return base64Encoding.decodeMAC(shopifySignatureHeader, value)
}
