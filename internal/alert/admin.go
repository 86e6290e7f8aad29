package alert

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"slices"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/lefia/edihub/internal/adminlist"
	"github.com/lefia/edihub/internal/adminpath"
	"github.com/lefia/edihub/internal/apperr"
	"github.com/lefia/edihub/internal/auditevent"
	"github.com/lefia/edihub/internal/auth"
	"github.com/lefia/edihub/internal/db"
)

// PageSize is how many alerts one page of the alerts page shows, and
// DashboardRows how many unresolved ones the dashboard shows at most.
const (
	PageSize      = 50
	DashboardRows = 10
)

// Service reads alerts for the admin pages and acknowledges them, within
// the signed-in user's scope: a tenant's users see their tenant's alerts,
// never a global one.
type Service struct {
	pool *pgxpool.Pool
}

// NewService returns a Service on pool.
func NewService(pool *pgxpool.Pool) *Service { return &Service{pool: pool} }

// Alert is an alert as the admin pages show it.
type Alert struct {
	ID     int64
	Tenant string // slug; "" for a global alert
	Rule   string
	State  string
	// Subject is what the alert is about; Link is the admin page that shows
	// it, named LinkName ("" when none does).
	Subject  Subject
	Link     string
	LinkName string
	Title    string
	Details  Details
	Opened   time.Time
	// Acknowledged, Resolved and LastNotified are nil until they happen.
	Acknowledged   *time.Time
	AcknowledgedBy string // email
	Resolved       *time.Time
	LastNotified   time.Time
	// Notifications are what the channels were told, oldest first, on an
	// alert's own page (Get).
	Notifications []Notification
}

// Notification is one notification of an alert to one channel, as its
// page shows it.
type Notification struct {
	Event       string // notify.EventOpened, EventReminder or EventResolved
	ChannelID   int64
	ChannelKind string
	ChannelName string
	Status      string // notify.StatusPending, StatusSent or StatusFailed
	Attempts    int32
	LastError   string
	Created     time.Time
	Sent        *time.Time
}

// Filter is what an admin asked the alerts page for, as written in its URL.
// Empty fields match anything.
type Filter struct {
	State  string
	Rule   string
	Tenant string // slug
	adminlist.Window
}

// list is how the filter travels in the page's URL.
var list = adminlist.NewList(adminpath.Path(adminpath.Alerts), []adminlist.Param[Filter]{
	{Name: "state", Field: func(f *Filter) *string { return &f.State }},
	{Name: "rule", Field: func(f *Filter) *string { return &f.Rule }},
	{Name: "tenant", Field: func(f *Filter) *string { return &f.Tenant }},
},
	nil,
	func(f *Filter) *adminlist.Window { return &f.Window },
)

// FilterFromQuery reads a filter from a URL query.
func FilterFromQuery(q url.Values) Filter { return list.Read(q) }

// URL is the alerts page showing f.
func (f Filter) URL() string { return list.URL(f) }

// Older is the same filter one page further back, after cursor.
func (f Filter) Older(cursor string) Filter { return list.Older(f, cursor) }

// FirstPage is the same filter from the newest alert on.
func (f Filter) FirstPage() Filter { return f.Older("") }

// Page is one page of the alerts page.
type Page struct {
	Alerts []Alert
	// Older is the cursor of the next, older page; "" on the last page.
	Older string
	// Problems says why the filter cannot be applied; no alerts are listed
	// while there are any.
	Problems []string
	// Tenants are the slugs the user may filter by.
	Tenants []string
}

// List returns the page of alerts that f asks for, within scope.
func (s *Service) List(ctx context.Context, scope auth.Scope, f Filter) (Page, error) {
	q := db.On(s.pool)
	p := db.AlertListParams{ScopeTenantID: scope.TenantFilter(), PageSize: PageSize + 1}
	var problems []string
	if f.State != "" {
		if slices.Contains(States, f.State) {
			p.State = &f.State
		} else {
			problems = append(problems, fmt.Sprintf("%q is not an alert state: open, acknowledged or resolved", f.State))
		}
	}
	if f.Rule != "" {
		if slices.Contains(Rules, f.Rule) {
			p.Rule = &f.Rule
		} else {
			problems = append(problems, fmt.Sprintf("%q is not an alert rule", f.Rule))
		}
	}
	ids, more, err := adminlist.Resolve(ctx, q, scope, adminlist.Names{Tenant: f.Tenant})
	if err != nil {
		return Page{}, err
	}
	problems = append(problems, more...)
	if f.Tenant != "" {
		p.TenantID = ids.TenantID
	}
	bounds, more := f.Bounds()
	problems = append(problems, more...)
	page := Page{Tenants: ids.Tenants, Problems: problems}
	if len(problems) > 0 {
		return page, nil
	}
	p.Since, p.Until = bounds.Since, bounds.Until
	if bounds.Before != nil {
		p.BeforeTime, p.BeforeID = &bounds.Before.Time, &bounds.Before.ID
	}
	rows, err := db.On(db.CustomPlans{Pool: s.pool}).AlertList(ctx, p)
	if err != nil {
		return Page{}, fmt.Errorf("list alerts: %w", err)
	}
	rows, page.Older = adminlist.Page(rows, PageSize, func(r db.AlertListRow) adminlist.Cursor {
		return adminlist.Cursor{Time: r.OpenedAt, ID: r.ID}
	})
	page.Alerts = make([]Alert, len(rows))
	for i, r := range rows {
		page.Alerts[i] = shown(db.AlertGetRow{
			ID: r.ID, TenantID: r.TenantID, TenantSlug: r.TenantSlug, Rule: r.Rule, SubjectKind: r.SubjectKind,
			SubjectKey: r.SubjectKey, State: r.State, Title: r.Title, Details: r.Details, OpenedAt: r.OpenedAt,
			AcknowledgedAt: r.AcknowledgedAt, ResolvedAt: r.ResolvedAt, LastNotifiedAt: r.LastNotifiedAt,
		})
	}
	return page, nil
}

// Unresolved returns the open alerts within scope, then the acknowledged
// ones, newest first, at most DashboardRows, for the dashboard.
func (s *Service) Unresolved(ctx context.Context, scope auth.Scope) ([]Alert, error) {
	rows, err := db.On(s.pool).AlertListUnresolved(ctx, db.AlertListUnresolvedParams{
		ScopeTenantID: scope.TenantFilter(), MaxRows: DashboardRows,
	})
	if err != nil {
		return nil, fmt.Errorf("list unresolved alerts: %w", err)
	}
	out := make([]Alert, len(rows))
	for i, r := range rows {
		out[i] = shown(db.AlertGetRow{
			ID: r.ID, TenantID: r.TenantID, TenantSlug: r.TenantSlug, Rule: r.Rule, SubjectKind: r.SubjectKind,
			SubjectKey: r.SubjectKey, State: r.State, Title: r.Title, Details: r.Details, OpenedAt: r.OpenedAt,
			AcknowledgedAt: r.AcknowledgedAt, ResolvedAt: r.ResolvedAt, LastNotifiedAt: r.LastNotifiedAt,
		})
	}
	return out, nil
}

// Get returns one alert within scope, with its notifications to the
// channels of the scope; one outside it is not found.
func (s *Service) Get(ctx context.Context, scope auth.Scope, id int64) (Alert, error) {
	q := db.On(s.pool)
	r, err := q.AlertGet(ctx, db.AlertGetParams{ID: id, ScopeTenantID: scope.TenantFilter()})
	if errors.Is(err, db.ErrNotFound) {
		return Alert{}, apperr.New(apperr.NotFound, "not-found", "alert %d does not exist", id)
	}
	if err != nil {
		return Alert{}, fmt.Errorf("load alert %d: %w", id, err)
	}
	a := shown(r)
	ns, err := q.NotificationListOfAlert(ctx, db.NotificationListOfAlertParams{AlertID: &id, ScopeTenantID: scope.TenantFilter()})
	if err != nil {
		return Alert{}, fmt.Errorf("list notifications of alert %d: %w", id, err)
	}
	a.Notifications = make([]Notification, len(ns))
	for i, n := range ns {
		a.Notifications[i] = Notification{
			Event: n.Event, ChannelID: n.ChannelID, ChannelKind: n.ChannelKind, ChannelName: n.ChannelName, Status: n.Status,
			Attempts: n.Attempts, LastError: n.LastError, Created: n.CreatedAt.UTC(), Sent: n.SentAt,
		}
	}
	return a, nil
}

// Acknowledge acknowledges an open alert within the user's scope, which
// stops its reminders, and records who did. An alert that is not open, or
// not within the scope, is a conflict said alike, so that a tenant's admin
// learns nothing of other tenants' alerts.
func (s *Service) Acknowledge(ctx context.Context, u auth.User, id int64) error {
	if !u.IsAdmin() {
		return auth.ErrAdminOnly
	}
	return db.WithTx(ctx, s.pool, func(q *db.Queries) error {
		a, err := q.AlertAcknowledge(ctx, db.AlertAcknowledgeParams{ID: id, UserID: u.ID, ScopeTenantID: u.Scope().TenantFilter()})
		if errors.Is(err, db.ErrNotFound) {
			return apperr.New(apperr.Conflict, "not-open",
				"alert %d is not an open alert you can acknowledge: it may be acknowledged or resolved already; reload the page", id)
		}
		if err != nil {
			return fmt.Errorf("acknowledge alert %d: %w", id, err)
		}
		return auditevent.Record(ctx, q, u.Actor(), a.TenantID, auditevent.AlertAcknowledged, auditevent.AlertDetails{
			AlertID: a.ID, Rule: a.Rule, SubjectKind: a.SubjectKind, SubjectKey: a.SubjectKey, Title: a.Title,
		})
	})
}

// shown is a stored alert as the pages show it.
func shown(r db.AlertGetRow) Alert {
	a := Alert{
		ID: r.ID, Rule: r.Rule, State: r.State, Subject: Subject{Kind: r.SubjectKind, Key: r.SubjectKey}, Title: r.Title,
		Opened: r.OpenedAt.UTC(), Acknowledged: r.AcknowledgedAt, Resolved: r.ResolvedAt, LastNotified: r.LastNotifiedAt.UTC(),
	}
	if r.TenantSlug != nil {
		a.Tenant = *r.TenantSlug
	}
	if r.AcknowledgedByEmail != nil {
		a.AcknowledgedBy = *r.AcknowledgedByEmail
	}
	_ = json.Unmarshal(r.Details, &a.Details) // written by the evaluator; a bad one only loses the lines
	a.Link, a.LinkName = subjectLink(a.Subject)
	return a
}

// subjectLink is the admin page that shows what an alert is about, and its
// name; "" when none does.
func subjectLink(s Subject) (path, name string) {
	switch s.Kind {
	case SubjectDestination:
		return adminpath.Path(adminpath.Destinations), "Destinations"
	case SubjectMessageType:
		return adminpath.Path(adminpath.MessageTypes), "Message types"
	case SubjectAPIKey:
		return adminpath.Path(adminpath.APIKeys), "API keys"
	case SubjectIntegration, SubjectIntegrationSecret:
		return adminpath.Path(adminpath.Integrations), "Integrations"
	case SubjectHousekeeping:
		return adminpath.Path(adminpath.Retention), "Data retention"
	case SubjectPartner:
		return adminpath.Path(adminpath.Partners), "Partners"
	}
	return "", ""
}
