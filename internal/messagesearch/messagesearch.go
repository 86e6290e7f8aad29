// Package messagesearch finds stored messages for the admin's messages
// page: by docnum, by a business key value (an order number, say), by an
// interchange control number, by tenant, environment, type and time, newest first, within the signed-in
// user's tenant scope.
//
// A million messages must not make a search slow, so every search is one
// index range: the filter picks the query whose required parameter is its
// most selective filter (a key value, an interchange control number, a
// docnum, a type, an environment, a
// tenant, or none), and that query walks the one index that fits it (see
// the MessageSearch queries). The plan does not depend on the parameters'
// values, so it holds also when PostgreSQL plans a prepared statement once
// for all values (plan_test.go proves it with generic plans forced).
package messagesearch

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/lefia/edihub/internal/adminlist"
	"github.com/lefia/edihub/internal/auth"
	"github.com/lefia/edihub/internal/db"
)

// PageSize is how many messages one page shows.
const PageSize = 50

// maxValueLength is the longest docnum or key value there is to find
// (messages.docnum and the business key values of message_key_values hold
// at most 255 bytes).
const maxValueLength = 255

// Service searches messages.
type Service struct {
	q *db.Queries
}

// New returns a Service on pool.
func New(pool *pgxpool.Pool) *Service {
	return &Service{q: db.On(pool)}
}

// Message is one row of the messages page.
type Message struct {
	ID          int64
	ReceivedAt  time.Time
	Tenant      string
	Environment string
	MessageType string
	Docnum      string // "" when the message has none
	Endpoint    string // where it arrived (messages.source_endpoint)
	ContentType string
	Keyed       bool // stored under an Idempotency-Key
	// PacketPosition and PacketSize place an IDoc within its packet; both
	// 0 for a message that arrived alone.
	PacketPosition, PacketSize int32
}

// Page is one page of the messages list.
type Page struct {
	Messages []Message
	// Older is the cursor of the next, older page; "" on the last page.
	Older string
	// Problems say why the filter cannot be applied; no messages are
	// listed while there are any.
	Problems []string
	// Tenants are the slugs the user may filter by.
	Tenants []string
}

// far bounds the time range a filter leaves open: PostgreSQL's timestamps
// reach further, and no message is received outside it.
var (
	farPast   = time.Date(1, 1, 1, 0, 0, 0, 0, time.UTC)
	farFuture = time.Date(9999, 12, 31, 0, 0, 0, 0, time.UTC)
)

// search is a filter resolved into what the queries take.
type search struct {
	adminlist.IDs
	scope  *int64
	docnum *string
	key    *string
	// controlNumber is an interchange control number.
	controlNumber *string
	since         time.Time
	below         adminlist.Cursor // the page holds rows before this (received_at, id)
}

// List returns the page of messages that f asks for, within scope.
func (s *Service) List(ctx context.Context, scope auth.Scope, f Filter) (Page, error) {
	sr, problems, err := s.resolve(ctx, scope, f)
	if err != nil {
		return Page{}, err
	}
	page := Page{Tenants: sr.Tenants, Problems: problems}
	if len(problems) > 0 {
		return page, nil
	}
	ids, err := s.find(ctx, sr)
	if err != nil {
		return Page{}, fmt.Errorf("search messages: %w", err)
	}
	more := len(ids) > PageSize
	if more {
		ids = ids[:PageSize]
	}
	rows, err := s.q.MessageSearchPage(ctx, db.MessageSearchPageParams{Ids: ids, ScopeTenantID: sr.scope})
	if err != nil {
		return Page{}, fmt.Errorf("load messages: %w", err)
	}
	page.Messages = make([]Message, len(rows))
	for i, r := range rows {
		page.Messages[i] = Message{
			ID: r.ID, ReceivedAt: r.ReceivedAt.UTC(), Tenant: r.TenantSlug, Environment: r.EnvironmentSlug,
			MessageType: r.MessageTypeCode, Docnum: db.OrEmpty(r.Docnum), Endpoint: r.SourceEndpoint,
			ContentType: r.ContentType, Keyed: r.Keyed,
		}
		if r.PacketPosition != nil && r.PacketSize != nil {
			page.Messages[i].PacketPosition, page.Messages[i].PacketSize = *r.PacketPosition, *r.PacketSize
		}
	}
	if more && len(rows) > 0 {
		last := rows[len(rows)-1]
		page.Older = adminlist.Cursor{Time: last.ReceivedAt, ID: last.ID}.Encode()
	}
	return page, nil
}

// find runs the query that fits the most selective filter of sr and
// returns one more id than a page holds, to tell whether there is another.
func (s *Service) find(ctx context.Context, sr search) ([]int64, error) {
	const limit = PageSize + 1
	since, beforeTime, beforeID := sr.since, sr.below.Time, sr.below.ID
	switch {
	case sr.key != nil:
		return s.q.MessageSearchByKey(ctx, db.MessageSearchByKeyParams{
			Value: *sr.key, ScopeTenantID: sr.scope, TenantID: sr.TenantID, EnvironmentID: sr.EnvironmentID,
			MessageTypeID: sr.MessageTypeID, Docnum: sr.docnum,
			Since: since, BeforeTime: beforeTime, BeforeID: beforeID, PageSize: limit,
		})
	case sr.controlNumber != nil:
		return s.q.MessageSearchByControlNumber(ctx, db.MessageSearchByControlNumberParams{
			ControlNumber: *sr.controlNumber, ScopeTenantID: sr.scope, TenantID: sr.TenantID, EnvironmentID: sr.EnvironmentID,
			MessageTypeID: sr.MessageTypeID, Docnum: sr.docnum,
			Since: since, BeforeTime: beforeTime, BeforeID: beforeID, PageSize: limit,
		})
	case sr.docnum != nil:
		return s.q.MessageSearchByDocnum(ctx, db.MessageSearchByDocnumParams{
			Docnum: sr.docnum, ScopeTenantID: sr.scope, TenantID: sr.TenantID, EnvironmentID: sr.EnvironmentID,
			MessageTypeID: sr.MessageTypeID, Since: since, BeforeTime: beforeTime, BeforeID: beforeID, PageSize: limit,
		})
	case sr.MessageTypeID != nil:
		return s.q.MessageSearchOfType(ctx, db.MessageSearchOfTypeParams{
			TenantID: *sr.TenantID, MessageTypeID: *sr.MessageTypeID, ScopeTenantID: sr.scope,
			EnvironmentID: sr.EnvironmentID, Since: since, BeforeTime: beforeTime, BeforeID: beforeID, PageSize: limit,
		})
	case sr.EnvironmentID != nil:
		return s.q.MessageSearchOfEnvironment(ctx, db.MessageSearchOfEnvironmentParams{
			EnvironmentID: *sr.EnvironmentID, ScopeTenantID: sr.scope,
			Since: since, BeforeTime: beforeTime, BeforeID: beforeID, PageSize: limit,
		})
	case sr.TenantID != nil:
		return s.q.MessageSearchOfTenant(ctx, db.MessageSearchOfTenantParams{
			TenantID: *sr.TenantID, ScopeTenantID: sr.scope,
			Since: since, BeforeTime: beforeTime, BeforeID: beforeID, PageSize: limit,
		})
	}
	return s.q.MessageSearchAll(ctx, db.MessageSearchAllParams{
		Since: since, BeforeTime: beforeTime, BeforeID: beforeID, PageSize: limit,
	})
}

// resolve turns f into a search and collects what cannot be understood.
func (s *Service) resolve(ctx context.Context, scope auth.Scope, f Filter) (search, []string, error) {
	sr := search{scope: scope.TenantFilter(), since: farPast, below: adminlist.Cursor{Time: farFuture}}
	ids, problems, err := adminlist.Resolve(ctx, s.q, scope, f.Names)
	if err != nil {
		return sr, nil, err
	}
	sr.IDs = ids
	for _, v := range []struct {
		name, value string
		dst         **string
	}{{"docnum", f.Docnum, &sr.docnum}, {"key value", f.Key, &sr.key}, {"control number", f.ControlNumber, &sr.controlNumber}} {
		switch {
		case v.value == "":
		case len(v.value) > maxValueLength:
			problems = append(problems, fmt.Sprintf("a %s has at most %d characters", v.name, maxValueLength))
		default:
			*v.dst = &v.value
		}
	}
	if sr.key != nil && sr.controlNumber != nil {
		// Each is its own index range; one page cannot walk both.
		problems = append(problems, "search by a key value or by a control number, not both")
	}
	bounds, boundProblems := f.Bounds()
	problems = append(problems, boundProblems...)
	if bounds.Since != nil {
		sr.since = *bounds.Since
	}
	if bounds.Until != nil {
		// Before (to, 0) is before to: ids are positive.
		sr.below = adminlist.Cursor{Time: *bounds.Until}
	}
	if bounds.Before != nil && bounds.Before.Before(sr.below) {
		sr.below = *bounds.Before
	}
	return sr, problems, nil
}
