// Package adminpath names every admin page's path once. The routes register
// these patterns, and the pages, redirects and filters build their links
// with Path, so that a page moves by changing one line.
package adminpath

import (
	"fmt"
	"net/url"
	"strings"
)

// Prefix is where the admin pages live; it also scopes their cookies, so
// that API requests never carry them.
const Prefix = "/admin"

// The admin routes, relative to Prefix, in Echo's syntax.
const (
	Dashboard             = ""
	Login                 = "/login"
	Logout                = "/logout"
	Audit                 = "/audit"
	Messages              = "/messages"
	Message               = "/messages/:id"
	MessageReceived       = "/messages/:id/received"
	Blocked               = "/blocked/:id"
	BlockedRelease        = "/blocked/:id/release"
	BlockedDismiss        = "/blocked/:id/dismiss"
	Review                = "/review"
	BlockedReceived       = "/blocked/:id/received"
	MessageTypes          = "/message-types"
	NewMessageType        = "/message-types/new"
	NewMessageTypePreview = "/message-types/new/preview"
	MessageType           = "/message-types/:id"
	MessageTypePreview    = "/message-types/:id/preview"
	Users                 = "/users"
	UserDisable           = "/users/:id/disable"
	UserEnable            = "/users/:id/enable"
	UserResetPassword     = "/users/:id/reset-password"
	Destinations          = "/destinations"
	NewDestination        = "/destinations/new"
	Destination           = "/destinations/:id"
	DestinationPause      = "/destinations/:id/pause"
	DestinationResume     = "/destinations/:id/resume"
	DestinationDelete     = "/destinations/:id/delete"
	Deliveries            = "/deliveries"
	DeliveriesRetry       = "/deliveries/retry"
	DeliveryRetry         = "/deliveries/:id/retry"
	DeliveryRetryNow      = "/deliveries/:id/retry-now"
	APIKeys               = "/api-keys"
	APIKeyRevoke          = "/api-keys/:id/revoke"
	APIKeyRotate          = "/api-keys/:id/rotate"
	Integrations          = "/integrations"
	IntegrationSecrets    = "/integrations/:id/secrets"
	IntegrationRevoke     = "/integrations/:id/secrets/:secret/revoke"
	IntegrationTolerance  = "/integrations/:id/tolerance"
	Retention             = "/retention"
	Alerts                = "/alerts"
	Alert                 = "/alerts/:id"
	AlertAcknowledge      = "/alerts/:id/acknowledge"
	Channels              = "/channels"
	NewChannel            = "/channels/new"
	Channel               = "/channels/:id"
	ChannelDelete         = "/channels/:id/delete"
	ChannelTest           = "/channels/:id/test"
	Partners              = "/partners"
)

// Path returns the URL path of route with its parameters (the segments
// that start with ':') replaced by args, in order. A wrong number of args
// is a programming error, caught by any test that renders the link.
func Path(route string, args ...any) string {
	segments := strings.Split(route, "/")
	n := 0
	for i, s := range segments {
		if strings.HasPrefix(s, ":") {
			if n == len(args) {
				panic(fmt.Sprintf("adminpath: %s needs more than %d arguments", route, len(args)))
			}
			segments[i] = url.PathEscape(fmt.Sprint(args[n]))
			n++
		}
	}
	if n != len(args) {
		panic(fmt.Sprintf("adminpath: %s takes %d arguments, not %d", route, n, len(args)))
	}
	return Prefix + strings.Join(segments, "/")
}
