package auditlog

import (
	"net/url"
	"regexp"
	"strconv"

	"github.com/lefia/edihub/internal/adminlist"
	"github.com/lefia/edihub/internal/adminpath"
)

// Filter is what an admin asked the audit page for, as written in its URL,
// so that a filtered page can be shared and the back button works. Empty
// fields match anything.
type Filter struct {
	Action string // e.g. message.duplicate_blocked
	adminlist.Names
	Key       string // the fingerprint or Idempotency-Key a duplicate matched
	MessageID string // events about one message (blocked duplicates name their original)
	// Content narrows to blocked duplicates whose content compared so with
	// their original's: "changed" (the audit log's "content changed only"),
	// "shape_only" or "identical".
	Content string
	adminlist.Window
}

// list is how the filter travels in the page's URL.
var list = adminlist.NewList(adminpath.Path(adminpath.Audit), []adminlist.Param[Filter]{
	{Name: "action", Field: func(f *Filter) *string { return &f.Action }},
	{Name: "key", Field: func(f *Filter) *string { return &f.Key }},
	{Name: "message", Field: func(f *Filter) *string { return &f.MessageID }},
	{Name: "content", Field: func(f *Filter) *string { return &f.Content }},
},
	func(f *Filter) *adminlist.Names { return &f.Names },
	func(f *Filter) *adminlist.Window { return &f.Window },
)

// FilterFromQuery reads a filter from a URL query.
func FilterFromQuery(q url.Values) Filter { return list.Read(q) }

// URL is the audit page showing f.
func (f Filter) URL() string { return list.URL(f) }

// Older is the same filter one page further back, after cursor.
func (f Filter) Older(cursor string) Filter { return list.Older(f, cursor) }

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

func parseID(s string) (int64, bool) {
	n, err := strconv.ParseInt(s, 10, 64)
	return n, err == nil && n > 0
}
