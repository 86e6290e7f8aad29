package signature

import (
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestGitHubDocumentedExample uses the example of
// https://docs.github.com/en/webhooks/using-webhooks/validating-webhook-deliveries#testing-the-webhook-payload-validation.
func TestGitHubDocumentedExample(t *testing.T) {
	t.Parallel()
	const documented = "sha256=757107ea0eb2509fc211221cce984b8a37570b6d7586c22c46f4379c8b043e17"
	tests := []struct {
		name      string
		delivery  string
		body      string
		wantCheck string
	}{
		{name: "with delivery id", delivery: "72d3162e-cc78-11e3-81ab-4c9367dc0958", body: "Hello, World!"},
		{name: "without delivery id", body: "Hello, World!"},
		{name: "tampered body", body: "Hello, World?", wantCheck: CheckSignatureMismatch},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			header := http.Header{}
			header.Set("X-Hub-Signature-256", documented)
			if tt.delivery != "" {
				header.Set("X-GitHub-Delivery", tt.delivery)
			}
			id, err := Verify(GitHub, "It's a Secret to Everybody", header, []byte(tt.body), time.Time{})
			if tt.wantCheck != "" {
				requireVerifyError(t, err, tt.wantCheck, githubSignatureHeader)
				return
			}
			require.NoError(t, err)
			require.Equal(t, tt.delivery, id)
		})
	}
}
