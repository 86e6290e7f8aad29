package blocked

import (
	"context"
	"fmt"
	"net/url"
	"strconv"
	"time"

	"github.com/lefia/edihub/internal/adminlist"
	"github.com/lefia/edihub/internal/adminpath"
	"github.com/lefia/edihub/internal/auth"
	"github.com/lefia/edihub/internal/db"
)

// The review states of a kept copy (blocked_copies.review_state).
const (
	StateOpen      = "open"      // awaiting a decision
	StateReleased  = "released"  // accepted as a message of its own
	StateDismissed = "dismissed" // reviewed and left blocked
	// StateAny is the filter value that lists copies in every state.
	StateAny = "any"
)

// States are the review states in the order the filter offers them.
var States = []string{StateOpen, StateReleased, StateDismissed, StateAny}

// ReviewPageSize is how many copies one page of the queue shows.
const ReviewPageSize = 50

// MaxOpenCount bounds the navigation's count of open copies: past it, the
// count says "more than" (OpenCountText) rather than read the whole queue.
const MaxOpenCount = 100

// Filter is what an admin asked the review queue for, as written in its
// URL. An empty State lists the open copies, which an admin comes to the
// queue for; StateAny lists all.
type Filter struct {
	State string
	adminlist.Names
	adminlist.Window
}

// reviewList is how the filter travels in the page's URL.
var reviewList = adminlist.NewList(adminpath.Path(adminpath.Review), []adminlist.Param[Filter]{
	{Name: "state", Field: func(f *Filter) *string { return &f.State }},
},
	func(f *Filter) *adminlist.Names { return &f.Names },
	func(f *Filter) *adminlist.Window { return &f.Window },
)

// FilterFromQuery reads a filter from a URL query.
func FilterFromQuery(q url.Values) Filter { return reviewList.Read(q) }

// URL is the review queue showing f.
func (f Filter) URL() string { return reviewList.URL(f) }

// Older is the same filter one page further back, after cursor.
func (f Filter) Older(cursor string) Filter { return reviewList.Older(f, cursor) }

// FirstPage is the same filter from the newest copy on.
func (f Filter) FirstPage() Filter { return f.Older("") }

// WithState is the same filter for copies in state, from the newest on.
func (f Filter) WithState(state string) Filter {
	f.State = state
	return f.FirstPage()
}

// ShownState is the state the filter lists.
func (f Filter) ShownState() string {
	if f.State == "" {
		return StateOpen
	}
	return f.State
}

// Reviewed is a kept copy as the review queue lists it.
type Reviewed struct {
	ID             int64
	Tenant         string
	Environment    string
	MessageType    string
	Docnum         string
	ReceivedAt     time.Time
	Arrivals       Arrivals
	OriginalID     int64
	OriginalDocnum string
	State          string
	// The decision, when State is not open.
	ReleasedAs int64 // the message a released copy became
	DecidedAt  time.Time
	DecidedBy  string // the admin's email; "" when the account is gone
	Reason     string
}

// ReviewPage is one page of the review queue.
type ReviewPage struct {
	Copies []Reviewed
	// Older is the cursor of the next, older page; "" on the last page.
	Older string
	// Problems say why the filter cannot be applied; nothing is listed
	// while there are any.
	Problems []string
	// Tenants are the slugs the user may filter by.
	Tenants []string
}

// Review returns the page of the review queue that f asks for, within scope.
func (s *Service) Review(ctx context.Context, scope auth.Scope, f Filter) (ReviewPage, error) {
	p := db.BlockedCopyReviewListParams{ScopeTenantID: scope.TenantFilter(), PageSize: ReviewPageSize + 1}
	ids, problems, err := adminlist.Resolve(ctx, s.plans, scope, f.Names)
	if err != nil {
		return ReviewPage{}, err
	}
	page := ReviewPage{Tenants: ids.Tenants}
	p.TenantID, p.EnvironmentID, p.MessageTypeID = ids.TenantID, ids.EnvironmentID, ids.MessageTypeID
	switch state := f.ShownState(); state {
	case StateOpen, StateReleased, StateDismissed:
		p.ReviewState = &state
	case StateAny:
	default:
		problems = append(problems, fmt.Sprintf("%q is not a review state: open, released, dismissed or any", f.State))
	}
	bounds, boundProblems := f.Bounds()
	problems = append(problems, boundProblems...)
	p.Since, p.Until = bounds.Since, bounds.Until
	if bounds.Before != nil {
		p.BeforeTime, p.BeforeID = &bounds.Before.Time, &bounds.Before.ID
	}
	if page.Problems = problems; len(problems) > 0 {
		return page, nil
	}
	rows, err := s.plans.BlockedCopyReviewList(ctx, p)
	if err != nil {
		return ReviewPage{}, fmt.Errorf("list blocked copies for review: %w", err)
	}
	rows, page.Older = adminlist.Page(rows, ReviewPageSize, func(r db.BlockedCopyReviewListRow) adminlist.Cursor {
		return adminlist.Cursor{Time: r.ReceivedAt, ID: r.ID}
	})
	page.Copies = make([]Reviewed, len(rows))
	for i, r := range rows {
		c := Reviewed{
			ID: r.ID, Tenant: r.TenantSlug, Environment: r.EnvironmentSlug, MessageType: r.MessageTypeCode,
			Docnum: db.OrEmpty(r.Docnum), ReceivedAt: r.ReceivedAt.UTC(), Arrivals: arrivals(r.Copies, r.ReceivedAt, r.LastSeenAt),
			OriginalID:     r.OriginalMessageID,
			OriginalDocnum: db.OrEmpty(r.OriginalDocnum), State: r.ReviewState,
			DecidedBy: db.OrEmpty(r.DecidedByEmail), Reason: db.OrEmpty(r.DecisionReason),
		}
		if r.ReleasedMessageID != nil {
			c.ReleasedAs = *r.ReleasedMessageID
		}
		if r.DecidedAt != nil {
			c.DecidedAt = r.DecidedAt.UTC()
		}
		page.Copies[i] = c
	}
	return page, nil
}

// OpenCount counts the copies within scope that await a decision, up to
// MaxOpenCount.
func (s *Service) OpenCount(ctx context.Context, scope auth.Scope) (int64, error) {
	n, err := s.plans.BlockedCopyOpenCount(ctx, db.BlockedCopyOpenCountParams{
		ScopeTenantID: scope.TenantFilter(), MaxCount: MaxOpenCount,
	})
	if err != nil {
		return 0, fmt.Errorf("count blocked copies awaiting review: %w", err)
	}
	return n, nil
}

// OpenCountText is the navigation's count: "" for none, the number up to
// MaxOpenCount-1, and "99+" from there.
func OpenCountText(n int64) string {
	switch {
	case n <= 0:
		return ""
	case n >= MaxOpenCount:
		return strconv.Itoa(MaxOpenCount-1) + "+"
	}
	return strconv.FormatInt(n, 10)
}
