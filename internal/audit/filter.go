package audit

import (
	"fmt"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/lefia/edihub/internal/adminpath"
)

// Filter is what an admin asked the audit page for, as written in its URL,
// so that a filtered page can be shared and the back button works. Empty
// fields match anything.
type Filter struct {
	Action      string // e.g. message.duplicate_blocked
	Tenant      string // tenant slug
	Environment string // environment slug, within the tenant
	MessageType string // message type code, within the tenant
	Key         string // the fingerprint or Idempotency-Key a duplicate matched
	MessageID   string // events about one message (blocked duplicates name their original)
	From        string // time range start, inclusive, UTC
	To          string // time range end, exclusive, UTC
	Before      string // cursor: show events older than this
}

// The URL query parameters of the filter fields, in the order they are
// written.
var params = []struct {
	name  string
	field func(*Filter) *string
}{
	{"action", func(f *Filter) *string { return &f.Action }},
	{"tenant", func(f *Filter) *string { return &f.Tenant }},
	{"environment", func(f *Filter) *string { return &f.Environment }},
	{"message_type", func(f *Filter) *string { return &f.MessageType }},
	{"key", func(f *Filter) *string { return &f.Key }},
	{"message", func(f *Filter) *string { return &f.MessageID }},
	{"from", func(f *Filter) *string { return &f.From }},
	{"to", func(f *Filter) *string { return &f.To }},
	{"before", func(f *Filter) *string { return &f.Before }},
}

// FilterFromQuery reads a filter from a URL query.
func FilterFromQuery(q url.Values) Filter {
	var f Filter
	for _, p := range params {
		*p.field(&f) = strings.TrimSpace(q.Get(p.name))
	}
	return f
}

// Query returns the filter as a URL query, leaving out empty fields.
func (f Filter) Query() string {
	q := url.Values{}
	for _, p := range params {
		if v := *p.field(&f); v != "" {
			q.Set(p.name, v)
		}
	}
	return q.Encode()
}

// URL is the audit page showing f.
func (f Filter) URL() string {
	if q := f.Query(); q != "" {
		return adminpath.Path(adminpath.Audit) + "?" + q
	}
	return adminpath.Path(adminpath.Audit)
}

// Older is the same filter one page further back, after cursor.
func (f Filter) Older(cursor string) Filter {
	f.Before = cursor
	return f
}

// FirstPage is the same filter from the newest event on.
func (f Filter) FirstPage() Filter { return f.Older("") }

// WithKey is the same filter narrowed to one fingerprint or key, from the
// newest event on.
func (f Filter) WithKey(key string) Filter {
	f.Key = key
	return f.FirstPage()
}

var actionPattern = regexp.MustCompile(`^[a-z_]+(\.[a-z_]+)+$`)

// maxKeyLength is the longest Idempotency-Key; fingerprints are shorter.
const maxKeyLength = 255

// timeLayouts are the forms a time filter may take: what an HTML
// datetime-local input sends, and RFC 3339 for hand-written URLs.
var timeLayouts = []string{"2006-01-02T15:04", "2006-01-02T15:04:05", time.RFC3339, "2006-01-02"}

// ParseRange reads the from and to of a time filter, as UTC; an empty one
// is nil, and one that is no time is nil and explained in problems.
func ParseRange(from, to string) (since, until *time.Time, problems []string) {
	for _, bound := range []struct {
		name, value string
		dst         **time.Time
	}{{"from", from, &since}, {"to", to, &until}} {
		if bound.value == "" {
			continue
		}
		if t, ok := parseTime(bound.value); ok {
			*bound.dst = &t
		} else {
			problems = append(problems, fmt.Sprintf("%q is not a time such as 2026-01-31T14:00 (%s)", bound.value, bound.name))
		}
	}
	return since, until, problems
}

func parseTime(s string) (time.Time, bool) {
	for _, layout := range timeLayouts {
		if t, err := time.ParseInLocation(layout, s, time.UTC); err == nil {
			return t, true
		}
	}
	return time.Time{}, false
}

func parseID(s string) (int64, bool) {
	n, err := strconv.ParseInt(s, 10, 64)
	return n, err == nil && n > 0
}
