// Package alert tells people when the hand-off or the intake goes wrong:
// rules that look at the database every ALERT_EVAL_INTERVAL (rules.go), an
// evaluator that opens an alert once per rule and subject, reminds while it
// stays open and unacknowledged, and resolves it when its condition clears,
// queueing a notification in the same transaction each time
// (notify.Enqueue, evaluator.go), and what the admin pages read and
// change: the list, one alert with its notifications, acknowledging
// (admin.go).
package alert

import (
	"time"
)

// The rules. Each is on; its thresholds come from config.Alerts.
const (
	// DestinationFailing: every attempt to a destination has failed for
	// ALERT_DESTINATION_FAILING_FOR, or one of its deliveries is failed.
	DestinationFailing = "destination.failing"
	// DeliveryLagging: a destination's oldest pending delivery is older
	// than ALERT_DELIVERY_LAG.
	DeliveryLagging = "delivery.lagging"
	// DuplicatesSpike: a message type's duplicates blocked in the last hour
	// exceed ALERT_DUPLICATE_SPIKE_MIN and 5 times its hourly average over
	// the 7 days before.
	DuplicatesSpike = "duplicates.spike"
	// IntakeRefusing: an API key or integration got ALERT_REFUSALS_MIN
	// refused answers in 15 minutes.
	IntakeRefusing = "intake.refusing"
	// SecretExpiring: an API key's or integration secret's rotation grace
	// ends within 24 hours.
	SecretExpiring = "secret.expiring"
	// HousekeepingFailing (global): the retention sweep or the traffic
	// rollup failed 3 rounds in a row.
	HousekeepingFailing = "housekeeping.failing"
	// DestinationAutoPaused: a destination was paused because every
	// attempt failed for DESTINATION_AUTO_PAUSE_AFTER; it resolves when an
	// admin resumes it.
	DestinationAutoPaused = "destination.auto_paused"
	// InterchangeGap: a sender skipped an interchange control number to a
	// receiver, and it has been missing for INTERCHANGE_GAP_AFTER; it
	// resolves when every such number has arrived.
	InterchangeGap = "interchange.gap"
	// DatabaseUnprotected (global): the primary has had no synchronous
	// standby for a minute although it has standbys to wait for, so an
	// acknowledged message is on one machine (package replication).
	DatabaseUnprotected = "database.unprotected"
)

// Rules lists every rule, in the order the alerts page's filter offers them.
var Rules = []string{
	DestinationFailing, DeliveryLagging, DestinationAutoPaused, DuplicatesSpike, IntakeRefusing, SecretExpiring,
	HousekeepingFailing, InterchangeGap, DatabaseUnprotected,
}

// The states of an alert.
const (
	Open         = "open"
	Acknowledged = "acknowledged"
	Resolved     = "resolved"
)

// States lists the states, in the order the alerts page's filter offers
// them.
var States = []string{Open, Acknowledged, Resolved}

// The kinds of subject an alert is about.
const (
	SubjectDestination       = "destination"
	SubjectMessageType       = "message_type"
	SubjectAPIKey            = "api_key"
	SubjectIntegration       = "integration"
	SubjectIntegrationSecret = "integration_secret"
	SubjectHousekeeping      = "housekeeping"
	SubjectPartner           = "partner"
	SubjectDatabase          = "database"
)

// Subject is what an alert is about: a kind and, within it, an id or name.
// A rule has at most one unresolved alert per subject.
type Subject struct {
	Kind string
	Key  string
}

// Finding is one subject a rule finds wrong in a round.
type Finding struct {
	// TenantID is the subject's tenant; nil for a global finding.
	TenantID *int64
	Subject  Subject
	// Title says what and where, in one line.
	Title   string
	Details Details
}

// Details are an alert's latest finding, kept as its details (jsonb).
type Details struct {
	// Lines say where (tenant, environment, destination or message type),
	// since when and how many, one fact a line, as notifications list them.
	Lines []string `json:"lines"`
	// Since is when the condition began, where the rule knows it.
	Since *time.Time `json:"since,omitempty"`
	// Count is how many of what the rule counts it found (failed
	// deliveries, duplicates, refusals…).
	Count int64 `json:"count,omitempty"`
}

// timeText is a time in notifications and details, which are read far from
// the browser that would show it in local time.
func timeText(t time.Time) string { return t.UTC().Format("2006-01-02 15:04 UTC") }
