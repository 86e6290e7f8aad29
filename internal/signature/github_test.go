package signature

import (
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestGitHubDocumentedExample uses GitHub's documented example, kept in testdata/reference_vectors.json.
func TestGitHubDocumentedExample(t *testing.T) {
	t.Parallel()
	example := loadReferenceVectors(t).GitHubDocumentedExample
	tests := []struct {
		name      string
		delivery  string
		body      string
		wantCheck string
	}{
		{name: "with delivery id", delivery: "72d3162e-cc78-11e3-81ab-4c9367dc0958", body: example.Payload},
		{name: "without delivery id", body: example.Payload},
		{name: "tampered body", body: "Hello, World?", wantCheck: CheckSignatureMismatch},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			header := http.Header{}
			header.Set("X-Hub-Signature-256", example.Signature)
			if tt.delivery != "" {
				header.Set("X-GitHub-Delivery", tt.delivery)
			}
			id, err := Verify(GitHub, []string{example.Secret}, header, []byte(tt.body), time.Time{})
			if tt.wantCheck != "" {
				requireVerifyError(t, err, tt.wantCheck, githubSignatureHeader)
				return
			}
			require.NoError(t, err)
			require.Empty(t, id, "X-GitHub-Delivery is not signed, so it is no identity")
		})
	}
}
