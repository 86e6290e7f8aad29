// Package notify tells people about alerts through notification channels:
// email, Slack-compatible incoming webhooks and generic webhooks signed the
// Standard Webhooks way.
//
// A notification row is written for every channel that should hear of an
// alert's change, with its River job, in the transaction that changes the
// alert (Enqueue), so a notification exists exactly when the change
// commits. Workers on the queue "notifications" send them, retry with
// backoff, and record what each channel answered on the row, which is what
// admins read. The queue is apart from ingest and the destinations' queues,
// and every attempt is bounded by NOTIFY_TIMEOUT, so a channel that hangs
// holds up nothing but its own notifications.
package notify

import (
	"context"
	"fmt"
	"strings"
	"sync"

	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"

	"github.com/lefia/edihub/internal/db"
)

// Notification is one thing to tell people: an alert opened, a reminder, or
// its resolution.
type Notification struct {
	TenantID *int64   // the alert's tenant; nil for a global alert (global channels only)
	AlertID  int64    // may be 0 for a channel test
	Event    string   // "opened", "reminder", "resolved"
	Rule     string   // e.g. "destination.failing"
	Title    string   // one short line: what and where
	Lines    []string // a few short lines: where, since when, how many
	Link     string   // path of the admin page that shows it, e.g. "/admin/alerts/42"
}

// Events a notification tells of, as stored in notifications.event.
const (
	EventOpened   = "opened"
	EventReminder = "reminder"
	EventResolved = "resolved"
	// EventTest is an admin's test of a channel.
	EventTest = "test"
)

// Kinds of channel, as stored in notification_channels.kind.
const (
	KindEmail   = "email"
	KindSlack   = "slack"
	KindWebhook = "webhook"
)

// Statuses of a notification, as stored in notifications.status.
const (
	StatusPending = "pending"
	StatusSent    = "sent"
	StatusFailed  = "failed"
)

// QueueName is the River queue notifications are sent from.
const QueueName = "notifications"

// Args is a notification job's arguments: the notification it sends. The
// channel is read when the job runs, so an edited channel's next attempt
// goes where it says then, and secrets never sit in the job table.
type Args struct {
	NotificationID int64 `json:"notification_id"`
}

// Kind implements river.JobArgs.
func (Args) Kind() string { return "notification" }

// jobMaxAttempts is River's bound on a notification job's runs. The worker
// fails a notification after NOTIFY_MAX_ATTEMPTS (at most 100) and ends its
// job then, so River's bound is only a backstop; it is fixed here because
// the transaction that enqueues does not know the workers' configuration.
const jobMaxAttempts = 101

// inserter is a River client that only inserts jobs inside the caller's
// transaction: it holds no connection and runs nothing, so one serves every
// caller.
var inserter = sync.OnceValue(func() *river.Client[pgx.Tx] {
	client, err := river.NewClient(riverpgxv5.New(nil), &river.Config{})
	if err != nil {
		// River validates only the configuration, which is constant here.
		panic(fmt.Sprintf("river rejects an insert-only client: %v", err))
	}
	return client
})

// Enqueue writes one notification per channel of n.TenantID plus one per
// global channel, and one River job each, in tx (the caller's transaction),
// so a notification exists exactly when the alert transition commits. It
// returns how many it wrote; none when there is no channel to tell.
func Enqueue(ctx context.Context, tx pgx.Tx, n Notification) (int, error) {
	var alertID *int64
	if n.AlertID != 0 {
		alertID = &n.AlertID
	}
	ids, err := db.On(tx).NotificationCreateForAlert(ctx, db.NotificationCreateForAlertParams{
		TenantID: n.TenantID, AlertID: alertID, Event: n.Event, Rule: n.Rule,
		Title: oneLine(n.Title), Body: body(n.Lines), Link: n.Link,
	})
	if err != nil {
		return 0, fmt.Errorf("write notifications of %s %s: %w", n.Rule, n.Event, err)
	}
	if len(ids) == 0 {
		return 0, nil
	}
	jobs := make([]river.InsertManyParams, len(ids))
	for i, id := range ids {
		jobs[i] = river.InsertManyParams{
			Args: Args{NotificationID: id}, InsertOpts: &river.InsertOpts{Queue: QueueName, MaxAttempts: jobMaxAttempts},
		}
	}
	if _, err := inserter().InsertManyFastTx(ctx, tx, jobs); err != nil {
		return 0, fmt.Errorf("queue notifications: %w", err)
	}
	return len(ids), nil
}

// body is the lines of a notification as stored: one a line, each made one
// line.
func body(lines []string) string {
	out := make([]string, 0, len(lines))
	for _, l := range lines {
		if l = oneLine(l); l != "" {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}

// oneLine replaces line breaks and other control characters by spaces: a
// title becomes an email's Subject header, where a line break would start a
// header of the caller's text.
func oneLine(s string) string {
	return strings.TrimSpace(strings.Map(func(r rune) rune {
		if r < ' ' || r == 0x7f || r == '\u2028' || r == '\u2029' || r == '\u0085' {
			return ' '
		}
		return r
	}, s))
}
