package delivery

import (
	"fmt"
	"net/url"
	"slices"
	"strconv"
	"time"

	"github.com/lefia/edihub/internal/adminlist"
	"github.com/lefia/edihub/internal/adminpath"
)

// Match selects deliveries; nil fields match anything. It is what a retry
// of many deliveries is given, and what a bulk replay keeps in its job.
type Match struct {
	ID            *int64     `json:"id,omitempty"`
	DestinationID *int64     `json:"destination_id,omitempty"`
	MessageType   *string    `json:"message_type,omitempty"`
	Since         *time.Time `json:"since,omitempty"` // created at or after
	Until         *time.Time `json:"until,omitempty"` // created before
}

// Filter is what an admin asked the deliveries page for, as written in its
// URL, so that a filtered page can be shared and the back button works.
// Empty fields match anything.
type Filter struct {
	Status      string // pending, delivered, failed or cancelled
	Destination string // a destination id
	MessageType string // a message type code
	adminlist.Window
}

// list is how the filter travels in the page's URL.
var list = adminlist.NewList(adminpath.Path(adminpath.Deliveries), []adminlist.Param[Filter]{
	{Name: "status", Field: func(f *Filter) *string { return &f.Status }},
	{Name: "destination", Field: func(f *Filter) *string { return &f.Destination }},
	{Name: "message_type", Field: func(f *Filter) *string { return &f.MessageType }},
},
	nil,
	func(f *Filter) *adminlist.Window { return &f.Window },
)

// Statuses lists the statuses a delivery can have, in the order the page's
// filter offers them.
var Statuses = []string{StatusPending, StatusDelivered, StatusFailed, StatusCancelled}

// FilterFromQuery reads a filter from a URL query.
func FilterFromQuery(q url.Values) Filter { return list.Read(q) }

// Values returns the filter as URL query values, leaving out empty fields.
func (f Filter) Values() url.Values { return list.Values(f) }

// URL is the deliveries page showing f.
func (f Filter) URL() string { return list.URL(f) }

// Older is the same filter one page further back, after cursor.
func (f Filter) Older(cursor string) Filter { return list.Older(f, cursor) }

// FirstPage is the same filter from the newest delivery on.
func (f Filter) FirstPage() Filter { return f.Older("") }

// Retries reports whether the deliveries f shows can include failed ones,
// which are what a retry of every delivery that matches it queues.
func (f Filter) Retries() bool { return f.Status == "" || f.Status == StatusFailed }

// maxCodeLength bounds a message type code in a filter; longer ones name no
// type.
const maxCodeLength = 64

// parse turns the filter into the values its queries take, and says what
// cannot be understood.
func (f Filter) parse() (status *string, m Match, before *adminlist.Cursor, problems []string) {
	if f.Status != "" {
		if slices.Contains(Statuses, f.Status) {
			status = &f.Status
		} else {
			problems = append(problems, fmt.Sprintf("%q is not a delivery status: pending, delivered or failed", f.Status))
		}
	}
	if f.Destination != "" {
		if id, err := strconv.ParseInt(f.Destination, 10, 64); err == nil && id > 0 {
			m.DestinationID = &id
		} else {
			problems = append(problems, fmt.Sprintf("%q is not a destination id", f.Destination))
		}
	}
	if f.MessageType != "" {
		if len(f.MessageType) <= maxCodeLength {
			m.MessageType = &f.MessageType
		} else {
			problems = append(problems, fmt.Sprintf("a message type code has at most %d characters", maxCodeLength))
		}
	}
	bounds, boundProblems := f.Bounds()
	m.Since, m.Until, before = bounds.Since, bounds.Until, bounds.Before
	problems = append(problems, boundProblems...)
	return status, m, before, problems
}

// Match is what a retry of every delivery f shows queues: the failed ones
// among them, whatever page f is on. ok is false when f cannot be
// understood or shows no failed delivery.
func (f Filter) Match() (m Match, ok bool) {
	_, m, _, problems := f.parse()
	return m, len(problems) == 0 && f.Retries()
}
