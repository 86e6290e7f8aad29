package notify

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/lefia/edihub/internal/adminpath"
	"github.com/lefia/edihub/internal/apperr"
	"github.com/lefia/edihub/internal/auth"
	"github.com/lefia/edihub/internal/db"
)

// Service is what the admin pages do with notifications: test a channel and
// list what it was sent.
type Service struct {
	pool   *pgxpool.Pool
	sender *Sender
}

// NewService returns a Service that sends tests with sender.
func NewService(pool *pgxpool.Pool, sender *Sender) *Service {
	return &Service{pool: pool, sender: sender}
}

// Test sends a test notification to a channel within scope at once, not
// through the queue, and returns what the channel answered; who asked is
// named in it. The notification is kept with its answer on the channel's
// list, sent or failed, and never tried again. A channel outside scope is
// not found, as one that does not exist.
func (s *Service) Test(ctx context.Context, scope auth.Scope, channelID int64, who string) (Answer, error) {
	channels, err := db.On(s.pool).NotificationChannelListForAdmin(ctx, db.NotificationChannelListForAdminParams{
		ScopeTenantID: scope.TenantFilter(), ID: &channelID,
	})
	if err != nil {
		return Answer{}, fmt.Errorf("load channel %d: %w", channelID, err)
	}
	if len(channels) == 0 {
		return Answer{}, apperr.New(apperr.NotFound, "not-found", "channel %d does not exist", channelID)
	}
	ch := channels[0]
	id, err := db.On(s.pool).NotificationInsert(ctx, db.NotificationInsertParams{
		ChannelID: ch.ID, Event: EventTest, Rule: "channel.test",
		Title: oneLine("Test of channel " + ch.Name),
		Body: body([]string{
			"A test sent by " + who + " at " + time.Now().UTC().Format(time.RFC3339) + ".",
			"Alerts of " + scopeOf(ch.TenantSlug) + " come to this channel.",
		}),
		Link: adminpath.Path(adminpath.Channel, ch.ID),
	})
	if err != nil {
		return Answer{}, fmt.Errorf("write test notification of channel %d: %w", channelID, err)
	}
	n, err := db.On(s.pool).NotificationGetForSend(ctx, id)
	if err != nil {
		return Answer{}, fmt.Errorf("load test notification %d: %w", id, err)
	}
	a := s.sender.send(ctx, channelOf(n), messageOf(n))
	status := StatusSent
	if a.Err != nil {
		status = StatusFailed
	}
	return a, record(ctx, s.pool, id, status, a)
}

// scopeOf names whose alerts a channel hears of.
func scopeOf(tenantSlug *string) string {
	if tenantSlug == nil {
		return "every tenant"
	}
	return "tenant " + *tenantSlug
}

// Sent is a notification as a channel's page lists it.
type Sent struct {
	ID         int64
	AlertID    *int64
	Event      string
	Rule       string
	Title      string
	Status     string
	Attempts   int32
	LastError  string
	LastAnswer string
	Created    time.Time
	SentAt     *time.Time
}

// recentLimit is how many notifications a channel's page lists.
const recentLimit = 50

// Recent lists the latest notifications of a channel within scope, newest
// first; none for a channel outside it.
func (s *Service) Recent(ctx context.Context, scope auth.Scope, channelID int64) ([]Sent, error) {
	rows, err := db.On(s.pool).NotificationListOfChannel(ctx, db.NotificationListOfChannelParams{
		ChannelID: channelID, ScopeTenantID: scope.TenantFilter(), MaxRows: recentLimit,
	})
	if err != nil {
		return nil, fmt.Errorf("list notifications of channel %d: %w", channelID, err)
	}
	out := make([]Sent, len(rows))
	for i, r := range rows {
		out[i] = Sent{
			ID: r.ID, AlertID: r.AlertID, Event: r.Event, Rule: r.Rule, Title: r.Title, Status: r.Status,
			Attempts: r.Attempts, LastError: r.LastError, LastAnswer: r.LastAnswer, Created: r.CreatedAt.UTC(), SentAt: r.SentAt,
		}
	}
	return out, nil
}
