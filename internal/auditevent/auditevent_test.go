package auditevent_test

import (
	"os"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/lefia/edihub/internal/auditevent"
)

// docs/audit-events.md names every action edihub records, so that the
// reference cannot fall behind the vocabulary.
func TestEveryActionIsDocumented(t *testing.T) {
	t.Parallel()
	doc, err := os.ReadFile("../../docs/audit-events.md")
	require.NoError(t, err)
	for _, action := range auditevent.Actions {
		require.Contains(t, string(doc), "`"+action+"`", "docs/audit-events.md does not name %s", action)
	}
}
