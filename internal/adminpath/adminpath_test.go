package adminpath_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/lefia/edihub/internal/adminpath"
)

func TestPath(t *testing.T) {
	t.Parallel()
	require.Equal(t, "/admin", adminpath.Path(adminpath.Dashboard))
	require.Equal(t, "/admin/audit", adminpath.Path(adminpath.Audit))
	require.Equal(t, "/admin/messages/42", adminpath.Path(adminpath.Message, 42))
	require.Equal(t, "/admin/blocked/7/release", adminpath.Path(adminpath.BlockedRelease, int64(7)))
	require.Equal(t, "/admin/message-types/a%2Fb/preview", adminpath.Path(adminpath.MessageTypePreview, "a/b"),
		"an argument stays one segment")
}

func TestPathRefusesTheWrongNumberOfArguments(t *testing.T) {
	t.Parallel()
	require.PanicsWithValue(t, "adminpath: /messages/:id needs more than 0 arguments", func() {
		adminpath.Path(adminpath.Message)
	})
	require.PanicsWithValue(t, "adminpath: /audit takes 0 arguments, not 1", func() {
		adminpath.Path(adminpath.Audit, 1)
	})
}
