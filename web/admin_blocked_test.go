package web

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/lefia/edihub/internal/messageview"
	"github.com/lefia/edihub/internal/payloaddiff"
)

func TestClipValue(t *testing.T) {
	t.Parallel()
	require.Equal(t, `"é"`, clipValue(`"é"`))
	exact := strings.Repeat("é", maxShownValue)
	require.Equal(t, exact, clipValue(exact))
	require.Equal(t, exact+"… (2001 characters)", clipValue(exact+"x"))
}

// A diff of large values lists changes only until their clipped values
// make messageview.MaxShownBytes, and says how many it lists.
func TestShownChangesAreBoundedInSize(t *testing.T) {
	t.Parallel()
	large := `"` + strings.Repeat("x", 10_000) + `"`
	changes := make([]payloaddiff.Change, 500)
	for i := range changes {
		changes[i] = payloaddiff.Change{Kind: payloaddiff.Changed, Path: "/v", Old: large, New: large}
	}
	shown := shownChanges(changes)
	size := 0
	for _, ch := range shown {
		size += len(clipValue(ch.Old)) + len(clipValue(ch.New))
	}
	require.LessOrEqual(t, size, messageview.MaxShownBytes)
	require.Len(t, shown, messageview.MaxShownBytes/(2*len(clipValue(large))))
	require.Contains(t, diffSummary(changes), "500 differences from the original; the first 64 are listed.")

	small := changes[:3]
	for i := range small {
		small[i] = payloaddiff.Change{Kind: payloaddiff.Added, Path: "/a", New: `"b"`}
	}
	require.Equal(t, small, shownChanges(small))
	require.Equal(t, "3 differences from the original.", diffSummary(small))
}
