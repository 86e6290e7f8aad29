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
	adminlist.Names
	Docnum string // exact docnum
	Key    string // exact value of one of the type's duplicate_key_fields
	// ControlNumber is an X12 or EDIFACT interchange control number (ISA13,
	// UNB 0020), exact: the messages of the interchanges it numbers.
	ControlNumber string
	adminlist.Window
}

// list is how the filter travels in the page's URL.
var list = adminlist.NewList(adminpath.Path(adminpath.Messages), []adminlist.Param[Filter]{
	{Name: "docnum", Field: func(f *Filter) *string { return &f.Docnum }},
	{Name: "key", Field: func(f *Filter) *string { return &f.Key }},
	{Name: "control_number", Field: func(f *Filter) *string { return &f.ControlNumber }},
},
	func(f *Filter) *adminlist.Names { return &f.Names },
	func(f *Filter) *adminlist.Window { return &f.Window },
)

// FilterFromQuery reads a filter from a URL query.
func FilterFromQuery(q url.Values) Filter { return list.Read(q) }

// URL is the messages page showing f.
func (f Filter) URL() string { return list.URL(f) }

// Older is the same filter one page further back, after cursor.
func (f Filter) Older(cursor string) Filter { return list.Older(f, cursor) }

// FirstPage is the same filter from the newest message on.
func (f Filter) FirstPage() Filter { return f.Older("") }
