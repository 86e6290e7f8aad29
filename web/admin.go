package web

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/a-h/templ"

	"github.com/lefia/edihub/internal/adminpath"
	"github.com/lefia/edihub/internal/auditevent"
	"github.com/lefia/edihub/internal/auditlog"
	"github.com/lefia/edihub/internal/auth"
	"github.com/lefia/edihub/internal/fingerprint"
	"github.com/lefia/edihub/internal/identifier"
	"github.com/lefia/edihub/internal/ingest"
	"github.com/lefia/edihub/internal/messageview"
)

// Page is what the frame of every admin page needs.
type Page struct {
	Title string
	User  auth.User
	// CSRF is the token every form posts back as _csrf, and htmx requests
	// send as the X-CSRF-Token header.
	CSRF string
	// Section is the navigation entry to mark as current.
	Section string
	// OpenReviews is the count of blocked copies awaiting review that the
	// navigation shows ("" for none; "99+" beyond).
	OpenReviews string
	// StandbyLag says how far behind the standby the page was read from
	// is ("42 s"), when that is more than a few seconds; "" otherwise.
	StandbyLag string
}

// The navigation entries of the admin pages.
const (
	SectionDashboard    = "dashboard"
	SectionMessages     = "messages"
	SectionAudit        = "audit"
	SectionRetention    = "retention"
	SectionReview       = "review"
	SectionMessageTypes = "message-types"
	SectionUsers        = "users"
	SectionAPIKeys      = "api-keys"
	SectionIntegrations = "integrations"
)

// LoginForm is the sign-in form, as shown again after a failed attempt.
type LoginForm struct {
	CSRF    string
	Next    string // where to go after signing in
	Email   string
	Problem string
}

// htmxConfig turns off what the Content-Security-Policy forbids anyway
// (evaluated attributes, inline scripts and styles), and htmx's history
// cache, which would keep copies of pages showing customer data in the
// browser's localStorage; back and forward load the page again instead.
const htmxConfig = `{"allowEval":false,"allowScriptTags":false,"includeIndicatorStyles":false,"historyCacheSize":0,"refreshOnHistoryMiss":true}`

// csrfHeaders is the hx-headers value that makes every htmx request carry
// the CSRF token.
func csrfHeaders(token string) string {
	raw, _ := json.Marshal(map[string]string{"X-CSRF-Token": token}) // a map of strings always marshals
	return string(raw)
}

// swapResults makes a link or form load its target with htmx, replacing
// only the results and keeping the URL in the address bar, so that the back
// button and shared links work as without JavaScript.
func swapResults(url string) templ.Attributes {
	return templ.Attributes{
		"hx-get": url, "hx-target": "#results", "hx-select": "#results",
		"hx-swap": "outerHTML", "hx-push-url": "true",
	}
}

func formatTime(t time.Time) string { return t.UTC().Format("2006-01-02 15:04:05") }

// adminURL is the link to an admin route that takes no parameters.
func adminURL(route string) templ.SafeURL { return templ.URL(adminpath.Path(route)) }

// adminIDURL is the link to an admin route that takes one parameter, id.
func adminIDURL(route string, id any) templ.SafeURL { return templ.URL(adminpath.Path(route, id)) }

// adminPairURL is the link to an admin route that takes two parameters.
func adminPairURL(route string, first, second any) templ.SafeURL {
	return templ.URL(adminpath.Path(route, first, second))
}

func messageURL(id int64) templ.SafeURL {
	return templ.URL(adminpath.Path(adminpath.Message, id))
}

// receivedURL downloads the bytes a message was received as.
func receivedURL(id int64) templ.SafeURL {
	return templ.URL(adminpath.Path(adminpath.MessageReceived, id))
}

func filterURL(f auditlog.Filter) templ.SafeURL { return templ.URL(f.URL()) }

// short abbreviates a fingerprint or key for a table cell; the whole value
// is in the cell's title and in the link it makes.
func short(key string) string {
	const n = 12
	if len(key) <= n+1 {
		return identifier.Visible(key)
	}
	return identifier.Visible(key[:n]) + "…"
}

// cutRunes returns v's first n characters and whether v has more, without
// copying v, which may be megabytes.
func cutRunes(v string, n int) (cut string, more bool) {
	count := 0
	for i := range v {
		if count == n {
			return v[:i], true
		}
		count++
	}
	return v, false
}

func scopeText(u auth.User) string {
	if u.TenantSlug == "" {
		return fmt.Sprintf("%s, all tenants", u.Role)
	}
	return fmt.Sprintf("%s, tenant %s", u.Role, u.TenantSlug)
}

// where names the tenant and environment of an event.
func where(e auditlog.Event, showTenant bool) string {
	switch {
	case !showTenant:
		return e.Environment
	case e.Environment == "":
		return e.Tenant
	}
	return e.Tenant + " / " + e.Environment
}

func modeText(mode string) string {
	if mode == "idempotency_key" {
		return "Idempotency-Key"
	}
	return mode
}

// sourceText says where a blocked copy came from.
func sourceText(s auditevent.SourceDetail) string {
	text := s.Endpoint
	if s.IntegrationID != nil {
		text += " " + short(*s.IntegrationID)
	}
	if s.RemoteAddr != "" {
		text += " from " + s.RemoteAddr
	}
	return text
}

// orNone shows an identifier, or "none". Control and bidirectional
// characters show as escapes, so that a docnum cannot pose as another or
// reorder the text around it.
func orNone(s string) string {
	if s == "" {
		return "none"
	}
	return identifier.Visible(s)
}

// claimText says whether retransmissions are matched against this message;
// released says it was accepted from a blocked copy.
func claimText(m messageview.Message, released bool) string {
	switch {
	case m.Fingerprint == "":
		return "The message has no fingerprint and is not deduplicated."
	case m.IdempotencyKey != "":
		return "Not claimed: the message's key replaces the fingerprint check."
	case released:
		return "Not claimed: the message was accepted from a blocked copy, and the original keeps matching retransmissions."
	case m.HoldsFingerprint:
		return "Retransmissions with this fingerprint are matched against this message."
	}
	return "Released: a newer message took the fingerprint over after the window passed."
}

// fallbackText says which list the fingerprint is computed from.
func fallbackText(f fingerprint.Fallback) string {
	switch f {
	case fingerprint.FallbackNoPaths:
		return "The message type has no duplicate_key_fields, so the fingerprint is made of the docnum."
	case fingerprint.FallbackAllMissing:
		return "None of the paths has a value in this payload, so the fingerprint is made of the docnum instead."
	case fingerprint.FallbackNoDocnum:
		return "The paths give no value and the message has no docnum, so it has no fingerprint and is not deduplicated."
	}
	return "The fingerprint is made of the values at these paths, marked in the payload below."
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

// byteSize is a size for a person, in binary units as MaxShownBytes is
// chosen.
func byteSize(n int) string {
	switch {
	case n < 1<<10:
		return fmt.Sprintf("%d bytes", n)
	case n < 1<<20:
		return fmt.Sprintf("%.0f KiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
}

// cutText says that only the start of a payload is shown, and what is left
// out of it.
func cutText(v messageview.PayloadView) string {
	text := fmt.Sprintf("This payload is %s as stored: only the first %s of its text are shown, so that the page stays small.",
		byteSize(v.Bytes), byteSize(messageview.MaxShownBytes))
	switch v.HiddenMarks {
	case 0:
	case 1:
		text += " One key value further on is not marked; it is listed under Business key."
	default:
		text += fmt.Sprintf(" %d key values further on are not marked; they are listed under Business key.", v.HiddenMarks)
	}
	return text
}

// keyOrigin says where a message's key came from: edihub derives it from
// the content for webhook schemes that sign no delivery id (github,
// shopify: "sha256:" and the content hash), a webhook's signed delivery id
// is it on the others, and a bearer sender sends it as Idempotency-Key.
func keyOrigin(m messageview.Message) string {
	switch {
	case m.IntegrationID != "" && strings.HasPrefix(m.IdempotencyKey, ingest.ContentKeyPrefix):
		return "The key was derived by edihub from the message's content, since the webhook signs no delivery id"
	case m.IntegrationID != "":
		return "The key is the webhook's signed delivery id"
	}
	return "The message arrived with an Idempotency-Key"
}

// pathParts splits a key path after each dot, where a page may break it
// over lines, so that no segment name breaks inside.
func pathParts(path string) []string {
	return strings.SplitAfter(path, ".")
}

// receivedText says how the received bytes are shown.
func receivedText(r *messageview.Received) string {
	if r.Indented != "" {
		return "The bytes as received, shown in their charset and one element a line"
	}
	return "The bytes as received, shown in their charset"
}
