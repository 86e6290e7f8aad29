// Package auditlog lists audit events for the admin pages: filters that live in
// the URL, keyset pagination that stays fast on millions of events, the
// signed-in user's tenant scope applied inside every query, and the details
// of blocked duplicates decoded for display.
package auditlog

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/lefia/edihub/internal/adminlist"
	"github.com/lefia/edihub/internal/auditevent"
	"github.com/lefia/edihub/internal/auth"
	"github.com/lefia/edihub/internal/db"
)

// PageSize is how many events one page shows.
const PageSize = 50

// Service reads the audit trail.
type Service struct {
	pool *pgxpool.Pool
	q    *db.Queries
}

// New returns a Service on pool. Its queries run with custom plans (see
// db.CustomPlans), so that the list query's optional filters fold away and
// the planner walks the one index that fits the rest.
func New(pool *pgxpool.Pool) *Service {
	return &Service{pool: pool, q: db.On(db.CustomPlans{Pool: pool})}
}

// list runs the list query; with the content filter, in a transaction that
// reads the log in time order along audit_events_content_time, whatever the
// statistics (db.AuditEventListInTimeOrder).
func (s *Service) list(ctx context.Context, p db.AuditEventListParams) ([]db.AuditEventListRow, error) {
	if p.Content == nil {
		return s.q.AuditEventList(ctx, p)
	}
	var rows []db.AuditEventListRow
	err := pgx.BeginTxFunc(ctx, s.pool, pgx.TxOptions{AccessMode: pgx.ReadOnly}, func(tx pgx.Tx) error {
		q := db.On(db.CustomPlans{Pool: tx})
		if err := q.AuditEventListInTimeOrder(ctx); err != nil {
			return err
		}
		var err error
		rows, err = q.AuditEventList(ctx, p)
		return err
	})
	return rows, err
}

// Event is one audit event as the admin pages show it.
type Event struct {
	ID          int64
	Time        time.Time
	Action      string
	Actor       string
	Tenant      string // slug, "" for events outside any tenant
	Environment string // slug, "" when the event names none
	MessageType string // code, "" when the event names none
	MessageID   int64  // 0 when the event names no message
	// MessageExpired says that the message the event names is no longer
	// stored: it expired after RETENTION_MESSAGES, while the event is kept
	// longer.
	MessageExpired bool
	MatchKey       string
	Duplicate      *Duplicate                   // set for message.duplicate_blocked events
	Released       *auditevent.ReleasedDetails  // set for message.duplicate_released events
	Dismissed      *auditevent.DismissedDetails // set for message.duplicate_dismissed events
	// Fields are the details of any other event, by name, for the table.
	Fields []Field
}

// Field is one member of an event's details object: a string as it is,
// anything else as compact JSON.
type Field struct {
	Name, Value string
}

// Duplicate is the details of a message.duplicate_blocked event.
type Duplicate struct {
	auditevent.BlockedDetails
	// CopyID is the blocked copy kept of a copy with changed content, 0 when
	// none was kept (identical content, or blocked before copies were kept).
	CopyID int64
	// ReleasedAs is the message an admin accepted the copy as, 0 while it
	// is not released.
	ReleasedAs int64
}

// Page is one page of the audit log.
type Page struct {
	Events []Event
	// Older is the cursor of the next, older page; "" on the last page.
	Older string
	// Problems says why the filter cannot be applied; no events are listed
	// while there are any.
	Problems []string
	// Tenants are the slugs the user may filter by.
	Tenants []string
}

// List returns the page of events that f asks for, within scope.
func (s *Service) List(ctx context.Context, scope auth.Scope, f Filter) (Page, error) {
	params, tenants, problems, err := s.resolve(ctx, scope, f)
	if err != nil {
		return Page{}, err
	}
	page := Page{Tenants: tenants, Problems: problems}
	if len(problems) > 0 {
		return page, nil
	}
	rows, err := s.list(ctx, params)
	if err != nil {
		return Page{}, fmt.Errorf("list audit events: %w", err)
	}
	rows, page.Older = adminlist.Page(rows, PageSize, func(r db.AuditEventListRow) adminlist.Cursor {
		return adminlist.Cursor{Time: r.CreatedAt, ID: r.ID}
	})
	page.Events = make([]Event, len(rows))
	for i, r := range rows {
		if page.Events[i], err = event(r); err != nil {
			return Page{}, err
		}
	}
	if err := s.addCopies(ctx, scope, page.Events); err != nil {
		return Page{}, err
	}
	if err := s.markExpiredMessages(ctx, scope, page.Events); err != nil {
		return Page{}, err
	}
	return page, nil
}

// markExpiredMessages marks the events whose message is no longer stored,
// in one query for the page.
func (s *Service) markExpiredMessages(ctx context.Context, scope auth.Scope, events []Event) error {
	var ids []int64
	for _, e := range events {
		if e.MessageID != 0 {
			ids = append(ids, e.MessageID)
		}
	}
	if len(ids) == 0 {
		return nil
	}
	stored, err := s.q.MessageIDsStored(ctx, db.MessageIDsStoredParams{Ids: ids, ScopeTenantID: scope.TenantFilter()})
	if err != nil {
		return fmt.Errorf("find the messages of audit events: %w", err)
	}
	for i := range events {
		events[i].MessageExpired = events[i].MessageID != 0 && !slices.Contains(stored, events[i].MessageID)
	}
	return nil
}

// addCopies links the blocked duplicates with changed content among events
// to the copies kept of them, in one query for the page.
func (s *Service) addCopies(ctx context.Context, scope auth.Scope, events []Event) error {
	changed := make(map[int64]*Duplicate)
	var ids []int64
	for _, e := range events {
		if e.Duplicate != nil && e.Duplicate.Content == auditevent.ContentChanged {
			changed[e.ID] = e.Duplicate
			ids = append(ids, e.ID)
		}
	}
	if len(ids) == 0 {
		return nil
	}
	copies, err := s.q.BlockedCopiesOfEvents(ctx, db.BlockedCopiesOfEventsParams{
		AuditEventIds: ids, ScopeTenantID: scope.TenantFilter(),
	})
	if err != nil {
		return fmt.Errorf("find blocked copies: %w", err)
	}
	for _, c := range copies {
		d := changed[c.AuditEventID]
		d.CopyID = c.ID
		if c.ReleasedMessageID != nil {
			d.ReleasedAs = *c.ReleasedMessageID
		}
	}
	return nil
}

// resolve turns the filter's names into the ids the query takes, and
// collects what cannot be understood (see filternames).
func (s *Service) resolve(ctx context.Context, scope auth.Scope, f Filter) (p db.AuditEventListParams, tenants, problems []string, err error) {
	p = db.AuditEventListParams{ScopeTenantID: scope.TenantFilter(), PageSize: PageSize + 1}
	if f.Action != "" {
		if actionPattern.MatchString(f.Action) {
			p.Action = &f.Action
		} else {
			problems = append(problems, fmt.Sprintf("%q is not an action name such as message.duplicate_blocked", f.Action))
		}
	}
	ids, more, err := adminlist.Resolve(ctx, s.q, scope, f.Names)
	if err != nil {
		return p, nil, nil, err
	}
	tenants = ids.Tenants
	problems = append(problems, more...)
	if f.Tenant != "" {
		p.TenantID = ids.TenantID
	}
	p.EnvironmentID, p.MessageTypeID = ids.EnvironmentID, ids.MessageTypeID
	if f.Key != "" {
		if len(f.Key) <= maxKeyLength {
			p.MatchKey = &f.Key
		} else {
			problems = append(problems, fmt.Sprintf("a fingerprint or key has at most %d characters", maxKeyLength))
		}
	}
	if f.MessageID != "" {
		if id, ok := parseID(f.MessageID); ok {
			p.MessageID = &id
		} else {
			problems = append(problems, fmt.Sprintf("%q is not a message id", f.MessageID))
		}
	}
	switch f.Content {
	case "":
	case auditevent.ContentChanged, auditevent.ContentShapeOnly, auditevent.ContentIdentical:
		p.Content = &f.Content
	default:
		problems = append(problems, fmt.Sprintf("%q is not a content comparison: changed, shape_only or identical", f.Content))
	}
	bounds, boundProblems := f.Bounds()
	problems = append(problems, boundProblems...)
	p.Since, p.Until = bounds.Since, bounds.Until
	if bounds.Before != nil {
		p.BeforeTime, p.BeforeID = &bounds.Before.Time, &bounds.Before.ID
	}
	return p, tenants, problems, nil
}

func event(r db.AuditEventListRow) (Event, error) {
	e := Event{
		ID: r.ID, Time: r.CreatedAt.UTC(), Action: r.Action, Actor: r.Actor,
		Tenant: db.OrEmpty(r.TenantSlug), Environment: db.OrEmpty(r.EnvironmentSlug), MessageType: db.OrEmpty(r.MessageTypeCode),
		MatchKey: db.OrEmpty(r.MatchKey),
	}
	if r.MessageID != nil {
		e.MessageID = *r.MessageID
	}
	var err error
	switch r.Action {
	case auditevent.DuplicateBlocked:
		e.Duplicate = &Duplicate{}
		err = json.Unmarshal(r.Details, &e.Duplicate.BlockedDetails)
	case auditevent.DuplicateReleased:
		e.Released = &auditevent.ReleasedDetails{}
		err = json.Unmarshal(r.Details, e.Released)
	case auditevent.DuplicateDismissed:
		e.Dismissed = &auditevent.DismissedDetails{}
		err = json.Unmarshal(r.Details, e.Dismissed)
	default:
		e.Fields, err = fields(r.Details)
	}
	if err != nil {
		return Event{}, fmt.Errorf("decode details of audit event %d: %w", r.ID, err)
	}
	return e, nil
}

// fields lists the members of a details object in the order of their names.
func fields(details []byte) ([]Field, error) {
	var members map[string]json.RawMessage
	if err := json.Unmarshal(details, &members); err != nil {
		return nil, err
	}
	out := make([]Field, 0, len(members))
	for _, name := range slices.Sorted(maps.Keys(members)) {
		raw := members[name]
		var s string
		if json.Unmarshal(raw, &s) != nil {
			s = string(raw)
		}
		out = append(out, Field{Name: name, Value: s})
	}
	return out, nil
}
