package messagesearch

import (
	"net/url"

	"github.com/lefia/edihub/internal/adminlist"
	"github.com/lefia/edihub/internal/adminpath"
)

// Filter is what an admin asked the messages page for, as written in its
// URL (SPEC.md, "Admin: finding messages"), so that a search can be shared
// and the back button works. Empty fields match anything.
type Filter struct {
	Tenant      string // tenant slug
	Environment string // environment slug, within the tenant
	MessageType string // message type code, within the tenant
	Docnum      string // exact docnum
	Key         string // exact value of one of the type's duplicate_key_fields
	From        string // received at or after, UTC
	To          string // received before, UTC
	Before      string // cursor: show messages older than this
}

// The URL query parameters of the filter fields, in the order they are
// written.
var params = []adminlist.Param[Filter]{
	{Name: "tenant", Field: func(f *Filter) *string { return &f.Tenant }},
	{Name: "environment", Field: func(f *Filter) *string { return &f.Environment }},
	{Name: "message_type", Field: func(f *Filter) *string { return &f.MessageType }},
	{Name: "docnum", Field: func(f *Filter) *string { return &f.Docnum }},
	{Name: "key", Field: func(f *Filter) *string { return &f.Key }},
	{Name: "from", Field: func(f *Filter) *string { return &f.From }},
	{Name: "to", Field: func(f *Filter) *string { return &f.To }},
	{Name: "before", Field: func(f *Filter) *string { return &f.Before }},
}

// FilterFromQuery reads a filter from a URL query.
func FilterFromQuery(q url.Values) Filter { return adminlist.Read(params, q) }

// URL is the messages page showing f.
func (f Filter) URL() string { return adminlist.URL(params, adminpath.Path(adminpath.Messages), f) }

// Older is the same filter one page further back, after cursor.
func (f Filter) Older(cursor string) Filter {
	f.Before = cursor
	return f
}

// FirstPage is the same filter from the newest message on.
func (f Filter) FirstPage() Filter { return f.Older("") }
