package partner

import (
	"context"
	"fmt"
	"net/url"
	"slices"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/lefia/edihub/internal/adminlist"
	"github.com/lefia/edihub/internal/adminpath"
	"github.com/lefia/edihub/internal/auth"
	"github.com/lefia/edihub/internal/db"
)

// PageSize is how many partners one page of the partners page shows.
const PageSize = 50

// Standards are the interchange standards, as the filter offers them.
var Standards = []string{"x12", "edifact"}

// WithGaps is the value of the gaps filter that lists only the partners
// with numbers missing.
const WithGaps = "open"

// Service reads the partners for the admin pages, within the signed-in
// user's scope.
type Service struct {
	pool *pgxpool.Pool
	// gapAfter is how long a skipped number must be missing to be listed:
	// INTERCHANGE_GAP_AFTER, as for the interchange.gap alert.
	gapAfter time.Duration
	now      func() time.Time
}

// NewService returns a Service on pool that lists the numbers missing for
// longer than gapAfter.
func NewService(pool *pgxpool.Pool, gapAfter time.Duration) *Service {
	return &Service{pool: pool, gapAfter: gapAfter, now: time.Now}
}

// Partner is a sender and receiver of interchanges as the partners page
// shows them.
type Partner struct {
	ID                                              int64
	Tenant, Environment, Standard, Sender, Receiver string
	LastControlNumber                               string
	LastSeen                                        time.Time
	// OpenGaps counts the numbers missing for longer than
	// INTERCHANGE_GAP_AFTER; Missing writes them ("3, 5–7 and 2 more").
	OpenGaps int64
	Missing  string
	// Jump is the latest jump too long to list as gaps, nil when none.
	Jump *Jump
}

// Jump is a partner's jump from one control number to a far higher one.
type Jump struct {
	From, To int64
	At       time.Time
}

// Filter is what an admin asked the partners page for, as written in its
// URL. Empty fields match anything.
type Filter struct {
	adminlist.Names
	Standard string
	Gaps     string // WithGaps or ""
	adminlist.Window
}

// list is how the filter travels in the page's URL; the window bounds
// when a partner was last seen.
var list = adminlist.NewList(adminpath.Path(adminpath.Partners), []adminlist.Param[Filter]{
	{Name: "standard", Field: func(f *Filter) *string { return &f.Standard }},
	{Name: "gaps", Field: func(f *Filter) *string { return &f.Gaps }},
},
	func(f *Filter) *adminlist.Names { return &f.Names },
	func(f *Filter) *adminlist.Window { return &f.Window },
)

// FilterFromQuery reads a filter from a URL query.
func FilterFromQuery(q url.Values) Filter { return list.Read(q) }

// URL is the partners page showing f.
func (f Filter) URL() string { return list.URL(f) }

// Older is the same filter one page further back, after cursor.
func (f Filter) Older(cursor string) Filter { return list.Older(f, cursor) }

// FirstPage is the same filter from the partner seen last on.
func (f Filter) FirstPage() Filter { return f.Older("") }

// Page is one page of the partners page.
type Page struct {
	Partners []Partner
	// Older is the cursor of the next page, of partners seen earlier; ""
	// on the last page.
	Older string
	// Problems says why the filter cannot be applied; no partners are
	// listed while there are any.
	Problems []string
	// Tenants are the slugs the user may filter by.
	Tenants []string
	// GapAfter is how long a number must be missing to be listed.
	GapAfter time.Duration
}

// List returns the page of partners that f asks for, within scope, the
// partner seen last first.
func (s *Service) List(ctx context.Context, scope auth.Scope, f Filter) (Page, error) {
	q := db.On(s.pool)
	p := db.PartnerListParams{
		ScopeTenantID: scope.TenantFilter(), PageSize: PageSize + 1, GapsShown: GapsShown,
		MissingBefore: s.now().Add(-s.gapAfter),
	}
	var problems []string
	if f.MessageType != "" {
		problems = append(problems, "the partners page does not filter by message type")
	}
	if f.Standard != "" {
		if slices.Contains(Standards, f.Standard) {
			p.Standard = &f.Standard
		} else {
			problems = append(problems, fmt.Sprintf("%q is not a standard: x12 or edifact", f.Standard))
		}
	}
	switch f.Gaps {
	case "":
	case WithGaps:
		p.WithGapsOnly = true
	default:
		problems = append(problems, fmt.Sprintf("%q is not a gaps filter: open, or nothing for every partner", f.Gaps))
	}
	ids, more, err := adminlist.Resolve(ctx, q, scope, adminlist.Names{Tenant: f.Tenant, Environment: f.Environment})
	if err != nil {
		return Page{}, err
	}
	problems = append(problems, more...)
	p.TenantID, p.EnvironmentID = ids.TenantID, ids.EnvironmentID
	bounds, more := f.Bounds()
	problems = append(problems, more...)
	page := Page{Tenants: ids.Tenants, Problems: problems, GapAfter: s.gapAfter}
	if len(problems) > 0 {
		return page, nil
	}
	p.Since, p.Until = bounds.Since, bounds.Until
	if bounds.Before != nil {
		p.BeforeTime, p.BeforeID = &bounds.Before.Time, &bounds.Before.ID
	}
	rows, err := db.On(db.CustomPlans{Pool: s.pool}).PartnerList(ctx, p)
	if err != nil {
		return Page{}, fmt.Errorf("list partners: %w", err)
	}
	rows, page.Older = adminlist.Page(rows, PageSize, func(r db.PartnerListRow) adminlist.Cursor {
		return adminlist.Cursor{Time: r.LastSeen, ID: r.ID}
	})
	page.Partners = make([]Partner, len(rows))
	for i, r := range rows {
		page.Partners[i] = Partner{
			ID: r.ID, Tenant: r.TenantSlug, Environment: r.EnvironmentSlug, Standard: r.Standard, Sender: r.Sender,
			Receiver: r.Receiver, LastControlNumber: r.LastControlNumber, LastSeen: r.LastSeen.UTC(),
			OpenGaps: r.OpenGaps, Missing: Numbers(r.FirstGaps, r.OpenGaps),
		}
		if r.JumpFrom != nil && r.JumpTo != nil && r.JumpedAt != nil {
			page.Partners[i].Jump = &Jump{From: *r.JumpFrom, To: *r.JumpTo, At: r.JumpedAt.UTC()}
		}
	}
	return page, nil
}
