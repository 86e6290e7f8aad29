package messagesearch_test

import (
	"net/url"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/lefia/edihub/internal/adminlist"
	"github.com/lefia/edihub/internal/messagesearch"
)

func TestFilterRoundTripsThroughTheURL(t *testing.T) {
	t.Parallel()
	f := messagesearch.Filter{
		Names:  adminlist.Names{Tenant: "acme", Environment: "production", MessageType: "ORDERS05"},
		Docnum: "0000000000900178",
		Key:    "4500 012&345",
		Window: adminlist.Window{From: "2026-01-01", To: "2026-02-01 10:00", Before: "MTIz"},
	}
	u, err := url.Parse(f.URL())
	require.NoError(t, err)
	require.Equal(t, "/admin/messages", u.Path)
	require.Equal(t, f, messagesearch.FilterFromQuery(u.Query()))
	require.Equal(t, "/admin/messages", messagesearch.Filter{}.URL(), "empty fields stay out of the URL")
	require.Equal(t, "/admin/messages?key=k", messagesearch.Filter{Key: "k", Window: adminlist.Window{Before: "c"}}.FirstPage().URL())
}
