// Package auditevent is the vocabulary of the audit trail: the names of the
// actions edihub records, the details objects of the events that pages and
// queries read back, and the one function that writes an event. Every
// package that writes events (ingest, release, provision, auth, the
// message-type editor) and every package that reads them (audit, dashboard,
// the pages) imports it, so readers never import writers for a constant.
// It imports nothing of edihub's but the generated queries.
package auditevent

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/lefia/edihub/internal/db"
)

// The actions edihub records. SQL statements that write or count events
// (queries/*.sql) spell the same names.
const (
	// DuplicateBlocked is every blocked duplicate; its details are
	// BlockedDetails.
	DuplicateBlocked = "message.duplicate_blocked"
	// DuplicateReleased is a blocked copy accepted as a new message; its
	// details are ReleasedDetails.
	DuplicateReleased = "message.duplicate_released"
	// DuplicateDismissed is a blocked copy with changed content that an
	// admin reviewed and left blocked; its details are DismissedDetails.
	DuplicateDismissed = "message.duplicate_dismissed"

	LoginFailed = "user.login_failed"
	LoggedIn    = "user.logged_in"
	LoggedOut   = "user.logged_out"

	UserCreated        = "user.created"
	UserDisabled       = "user.disabled"
	UserEnabled        = "user.enabled"
	UserPasswordReset  = "user.password_reset"
	TenantCreated      = "tenant.created"
	EnvironmentCreated = "environment.created"
	APIKeyCreated      = "api_key.created"
	APIKeyRevoked      = "api_key.revoked"
	APIKeyRotated      = "api_key.rotated"
	MessageTypeCreated = "message_type.created"
	MessageTypeUpdated = "message_type.updated"
	IntegrationCreated = "integration.created"
	// IntegrationSecretAdded is a new webhook secret of an integration,
	// beside the old one for its grace period.
	IntegrationSecretAdded = "integration.secret_added"
	// IntegrationSecretRevoked is secrets of an integration made to stop at
	// once.
	IntegrationSecretRevoked = "integration.secret_revoked"
	// IntegrationToleranceChanged is an integration's signature timestamp
	// tolerance changed.
	IntegrationToleranceChanged = "integration.tolerance_changed"

	DestinationCreated = "destination.created"
	DestinationUpdated = "destination.updated"
	DestinationPaused  = "destination.paused"
	DestinationResumed = "destination.resumed"
	// DestinationDeleted is a destination deleted by an admin, with the
	// deliveries it still owed cancelled.
	DestinationDeleted = "destination.deleted"
	ChannelCreated     = "channel.created"
	ChannelUpdated     = "channel.updated"
	ChannelDeleted     = "channel.deleted"
	// DeliveriesRetried is failed deliveries queued for a new round of
	// attempts by an admin, one event per batch queued.
	DeliveriesRetried = "delivery.retried"
	// DeliveryRetriedNow is a pending delivery's next attempt brought
	// forward to now by an admin.
	DeliveryRetriedNow = "delivery.retried_now"

	// AlertOpened, AlertAcknowledged and AlertResolved are an alert's
	// changes of state; their details are AlertDetails.
	AlertOpened       = "alert.opened"
	AlertAcknowledged = "alert.acknowledged"
	AlertResolved     = "alert.resolved"
)

// Actions lists every action, in the order the audit log's action filter
// suggests them.
var Actions = []string{
	DuplicateBlocked, DuplicateReleased, DuplicateDismissed,
	LoginFailed, LoggedIn, LoggedOut,
	UserCreated, UserDisabled, UserEnabled, UserPasswordReset, TenantCreated, EnvironmentCreated, APIKeyCreated, APIKeyRevoked, APIKeyRotated,
	MessageTypeCreated, MessageTypeUpdated, IntegrationCreated, IntegrationSecretAdded, IntegrationSecretRevoked, IntegrationToleranceChanged,
	DestinationCreated, DestinationUpdated, DestinationPaused, DestinationResumed, DestinationDeleted,
	DeliveriesRetried, DeliveryRetriedNow,
	ChannelCreated, ChannelUpdated, ChannelDeleted,
	AlertOpened, AlertAcknowledged, AlertResolved,
}

// Actors that are not a signed-in user (whose actor is "user:<id>").
const (
	// ActorCLI is a change made with the edihub command.
	ActorCLI = "cli"
	// ActorAnonymous is a sign-in attempt that matched no user.
	ActorAnonymous = "anonymous"
	// ActorAlerts is the alert evaluator: alerts it opened and resolved,
	// destinations it paused (DESTINATION_AUTO_PAUSE_AFTER).
	ActorAlerts = "alerts"
)

// Record writes an audit event about something who did, in q's
// transaction, with details marshalled to the event's JSON object.
func Record(ctx context.Context, q *db.Queries, who string, tenantID *int64, action string, details any) error {
	return Write(ctx, q, db.AuditEventInsertParams{TenantID: tenantID, Action: action, Actor: who}, details)
}

// RecordMessageType writes an audit event about a message type, naming it
// in the event's message_type_id, so that the audit log's message type
// filter finds its changes.
func RecordMessageType(ctx context.Context, q *db.Queries, who string, tenantID, messageTypeID int64, action string, details any) error {
	return Write(ctx, q, db.AuditEventInsertParams{
		TenantID: &tenantID, MessageTypeID: &messageTypeID, Action: action, Actor: who,
	}, details)
}

// Write inserts event, whose Details it sets to details marshalled, in q's
// transaction.
func Write(ctx context.Context, q *db.Queries, event db.AuditEventInsertParams, details any) error {
	raw, err := json.Marshal(details)
	if err != nil {
		return fmt.Errorf("encode details of %s: %w", event.Action, err)
	}
	event.Details = raw
	if err := q.AuditEventInsert(ctx, event); err != nil {
		return fmt.Errorf("record %s: %w", event.Action, err)
	}
	return nil
}
