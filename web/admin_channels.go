package web

import (
	"github.com/a-h/templ"

	"github.com/lefia/edihub/internal/adminpath"
	"github.com/lefia/edihub/internal/notify"
	"github.com/lefia/edihub/internal/provision"
)

// SectionChannels is the navigation entry of the notification channels.
const SectionChannels = "channels"

// Channels is the notification channels page.
type Channels struct {
	List []provision.Channel
	// Deleted is the channel just deleted, 0 for none.
	Deleted int64
}

// ChannelForm creates a channel (ID 0) or edits one, as shown again after
// a problem.
type ChannelForm struct {
	ID int64
	// Tenant is the slug of the tenant whose alerts the channel hears of,
	// "" for a global channel. A new channel's is chosen from Tenants, and
	// from global too when Global.
	Tenant  string
	Tenants []string
	Global  bool
	Kind    string
	Name    string
	Target  string
	Problem string
}

// ChannelView is a channel's page: what it is, the form that edits it (for
// admins), the answer to a test just sent, and what it was sent lately.
type ChannelView struct {
	Channel provision.Channel
	Form    ChannelForm
	Saved   bool
	// Tested is the answer to the test just sent; nil when none was.
	Tested *notify.Answer
	Sent   []notify.Sent
}

// channelKinds are the kinds a new channel may be, as the form names them.
var channelKinds = []struct{ Kind, Label string }{
	{notify.KindEmail, "Email"},
	{notify.KindSlack, "Slack (incoming webhook)"},
	{notify.KindWebhook, "Webhook (signed JSON)"},
}

func channelURL(id int64) templ.SafeURL {
	return templ.URL(adminpath.Path(adminpath.Channel, id))
}

// channelScope names whose alerts a channel hears of.
func channelScope(tenant string) string {
	if tenant == "" {
		return "global: every tenant"
	}
	return tenant
}

// notificationBadge is the badge class of a notification's status.
func notificationBadge(status string) string {
	switch status {
	case notify.StatusSent:
		return "badge status-delivered"
	case notify.StatusFailed:
		return "badge status-failed"
	}
	return "badge status-pending"
}
