package server_test

import (
	"context"
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/lefia/edihub/internal/refused"
	"github.com/lefia/edihub/internal/server"
)

// Refused ingest answers are counted per authenticated API key and per
// known integration, for intake.refusing; a request whose key is unknown
// counts for nobody, so made-up keys add no subject, and an answer that
// says nothing of the sender (a duplicate's 200) is not a refusal.
func TestRefusalsAreCountedPerKeyAndIntegration(t *testing.T) {
	t.Parallel()
	counts := refused.New()
	b := setup(t, server.WithRefusals(counts))
	b.messageType(t, "ORDERS05", []string{"E1EDK01.BELNR"}, nil)
	b.messageType(t, "GH_EVENT", nil, nil)
	integration := b.integration(t, "GH_EVENT", "github", githubSecret)

	for range 3 {
		r := b.post(t, []byte(`{"message_type": "ORDERS05"`))
		require.Equal(t, http.StatusBadRequest, r.status)
	}
	r := b.post(t, []byte(`{}`), "Authorization", "Bearer not-a-key")
	require.Equal(t, http.StatusUnauthorized, r.status)
	r = b.webhook(t, integration, []byte(`{"id": 1}`), "X-Hub-Signature-256", "sha256=00")
	require.Equal(t, http.StatusUnauthorized, r.status)

	require.NoError(t, counts.Flush(context.Background(), b.pool))
	require.Equal(t, 3, b.count(t, `SELECT coalesce(sum(refusals), 0) FROM intake_refusals WHERE subject_kind = 'api_key'`))
	require.Equal(t, 1, b.count(t, `SELECT coalesce(sum(refusals), 0) FROM intake_refusals
		WHERE subject_kind = 'integration' AND subject_key = $1`, integration))
	require.Equal(t, 2, b.count(t, `SELECT count(DISTINCT subject_key) FROM intake_refusals`))
}
