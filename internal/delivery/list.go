package delivery

import (
	"context"
	"fmt"
	"time"

	"github.com/lefia/edihub/internal/adminlist"
	"github.com/lefia/edihub/internal/auth"
	"github.com/lefia/edihub/internal/db"
)

// PageSize is how many deliveries one page of the deliveries page shows.
const PageSize = 50

// Listed is a delivery as the deliveries page shows it.
type Listed struct {
	ID             int64
	Created        time.Time
	Status         string
	Attempts       int32
	LastAttempt    *time.Time
	Delivered      *time.Time
	MessageID      int64
	Docnum         string
	MessageType    string
	DestinationID  int64
	DestinationURL string
	Tenant         string
	Environment    string
	// LastAnswer is the HTTP status of the last attempt, nil when it got
	// none or there was no attempt yet; LastError says what went wrong.
	LastAnswer *int32
	LastError  string
	// Next is when a pending delivery's next attempt is due.
	Next *NextAttempt
}

// Page is one page of the deliveries page.
type Page struct {
	Deliveries []Listed
	// Older is the cursor of the next, older page; "" on the last page.
	Older string
	// Problems says why the filter cannot be applied; no deliveries are
	// listed while there are any.
	Problems []string
}

// List returns the page of deliveries that f asks for, within scope.
func (s *Service) List(ctx context.Context, scope auth.Scope, f Filter) (Page, error) {
	return s.ListUpTo(ctx, scope, f, PageSize)
}

// ListUpTo returns a page of at most size deliveries that f asks for,
// within scope.
func (s *Service) ListUpTo(ctx context.Context, scope auth.Scope, f Filter, size int) (Page, error) {
	status, m, before, problems := f.parse()
	if len(problems) > 0 {
		return Page{Problems: problems}, nil
	}
	p := db.DeliveryListParams{
		ScopeTenantID: scope.TenantFilter(), Status: status, DestinationID: m.DestinationID, MessageType: m.MessageType,
		Since: m.Since, Until: m.Until, PageSize: int32(size) + 1,
	}
	if before != nil {
		p.BeforeTime, p.BeforeID = &before.Time, &before.ID
	}
	// Custom plans: the planner folds the filters not given away and walks
	// the index that fits the rest (see db.CustomPlans).
	rows, err := db.On(db.CustomPlans{Pool: s.pool}).DeliveryList(ctx, p)
	if err != nil {
		return Page{}, fmt.Errorf("list deliveries: %w", err)
	}
	var page Page
	rows, page.Older = adminlist.Page(rows, size, func(r db.DeliveryListRow) adminlist.Cursor {
		return adminlist.Cursor{Time: r.CreatedAt, ID: r.ID}
	})
	page.Deliveries = make([]Listed, len(rows))
	for i, r := range rows {
		page.Deliveries[i] = Listed{
			ID: r.ID, Created: r.CreatedAt.UTC(), Status: r.Status, Attempts: r.Attempts,
			LastAttempt: r.LastAttemptAt, Delivered: r.DeliveredAt, MessageID: r.MessageID, MessageType: r.MessageTypeCode,
			DestinationID: r.DestinationID, DestinationURL: r.DestinationUrl, Tenant: r.TenantSlug, Environment: r.EnvironmentSlug,
			LastAnswer: r.LastResponseStatus, LastError: r.LastError,
		}
		if r.Docnum != nil {
			page.Deliveries[i].Docnum = *r.Docnum
		}
	}
	if err := s.nextAttempts(ctx, page.Deliveries); err != nil {
		return Page{}, err
	}
	return page, nil
}

// OfMessage is one delivery of a message with every attempt, as the
// message's page shows it.
type OfMessage struct {
	ID             int64
	Created        time.Time
	Status         string
	Delivered      *time.Time
	DestinationID  int64
	DestinationURL string
	Attempts       []Attempt
}

// Attempt is one HTTP attempt of a delivery.
type Attempt struct {
	Number   int32
	Started  time.Time
	Duration time.Duration
	// Answer is the HTTP status the destination answered, nil when none
	// came (a timeout, a refused connection).
	Answer *int32
	Error  string
	// Snippet is the start of the answer's body, at most snippetBytes.
	Snippet string
}

// ForMessage returns a message's deliveries with their attempts, within
// scope; a message outside it has none.
func (s *Service) ForMessage(ctx context.Context, scope auth.Scope, messageID int64) ([]OfMessage, error) {
	q := db.On(s.pool)
	rows, err := q.DeliveryListOfMessage(ctx, db.DeliveryListOfMessageParams{MessageID: messageID, ScopeTenantID: scope.TenantFilter()})
	if err != nil {
		return nil, fmt.Errorf("list deliveries of message %d: %w", messageID, err)
	}
	attempts, err := q.DeliveryAttemptListOfMessage(ctx, db.DeliveryAttemptListOfMessageParams{
		MessageID: messageID, ScopeTenantID: scope.TenantFilter(),
	})
	if err != nil {
		return nil, fmt.Errorf("list delivery attempts of message %d: %w", messageID, err)
	}
	byDelivery := map[int64][]Attempt{}
	for _, a := range attempts {
		byDelivery[a.DeliveryID] = append(byDelivery[a.DeliveryID], Attempt{
			Number: a.Attempt, Started: a.StartedAt.UTC(), Duration: time.Duration(a.DurationMs) * time.Millisecond,
			Answer: a.ResponseStatus, Error: a.Error, Snippet: a.ResponseSnippet,
		})
	}
	out := make([]OfMessage, len(rows))
	for i, r := range rows {
		out[i] = OfMessage{
			ID: r.ID, Created: r.CreatedAt.UTC(), Status: r.Status, Delivered: r.DeliveredAt,
			DestinationID: r.DestinationID, DestinationURL: r.DestinationUrl, Attempts: byDelivery[r.ID],
		}
	}
	return out, nil
}

// Backlog is a destination's queue as the destinations page shows it.
type Backlog struct {
	// Pending counts the deliveries not yet made, up to BacklogCountCap;
	// Capped says there are at least that many.
	Pending int64
	Capped  bool
	// Oldest is how long the oldest pending delivery has waited.
	Oldest time.Duration
	// PerSecond is the deliveries made per second over the last minute.
	PerSecond float64
}

// BacklogCountCap bounds the pending deliveries counted for a destination,
// so that the destinations page costs as little with a backlog of millions
// as with none; so does backlogRateCap the deliveries read for the rate.
const (
	BacklogCountCap = 10000
	backlogRateCap  = 1000
)

// Backlogs returns the queue of each of the destinations, which the
// caller has already found within its scope.
func (s *Service) Backlogs(ctx context.Context, destinationIDs []int64) (map[int64]Backlog, error) {
	out := make(map[int64]Backlog, len(destinationIDs))
	if len(destinationIDs) == 0 {
		return out, nil
	}
	rows, err := db.On(s.pool).DeliveryBacklogOfDestinations(ctx, db.DeliveryBacklogOfDestinationsParams{
		DestinationIds: destinationIDs, PendingCap: BacklogCountCap, RateCap: backlogRateCap,
	})
	if err != nil {
		return nil, fmt.Errorf("read destinations' queues: %w", err)
	}
	for _, r := range rows {
		out[r.DestinationID] = Backlog{
			Pending: r.Pending, Capped: r.Pending >= BacklogCountCap,
			Oldest:    time.Duration(r.OldestSeconds * float64(time.Second)),
			PerSecond: r.PerSecond,
		}
	}
	return out, nil
}
