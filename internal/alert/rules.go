package alert

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/lefia/edihub/internal/config"
	"github.com/lefia/edihub/internal/db"
	"github.com/lefia/edihub/internal/identifier"
	"github.com/lefia/edihub/internal/partner"
	"github.com/lefia/edihub/internal/replication"
)

// rule finds, at now, every subject whose condition holds. Its queries run
// in the round's transaction, within the statement limits the round sets.
type rule struct {
	name string
	find func(ctx context.Context, q *db.Queries, now time.Time) ([]Finding, error)
}

// The fixed parts of the rules: the window of intake.refusing, the notice
// secret.expiring gives, and the failed rounds housekeeping.failing waits for.
const (
	refusalWindow     = 15 * time.Minute
	expiryNotice      = 24 * time.Hour
	housekeepingTries = 3
	// unprotectedHold is how long the primary must have been alone before
	// database.unprotected opens: a planned switchover leaves it alone for
	// seconds, which need nobody's attention. EdihubDatabaseUnprotected
	// waits as long (for: 1m).
	unprotectedHold = time.Minute
)

// rules are the rules with the thresholds of cfg.
func rules(cfg config.Alerts) []rule {
	alone := &aloneSince{}
	return []rule{
		{DestinationFailing, func(ctx context.Context, q *db.Queries, now time.Time) ([]Finding, error) {
			return destinationsFailing(ctx, q, now.Add(-cfg.DestinationFailingFor))
		}},
		{DeliveryLagging, func(ctx context.Context, q *db.Queries, now time.Time) ([]Finding, error) {
			return deliveriesLagging(ctx, q, cfg.DeliveryLag, now)
		}},
		{DestinationAutoPaused, func(ctx context.Context, q *db.Queries, _ time.Time) ([]Finding, error) {
			return destinationsAutoPaused(ctx, q)
		}},
		{DuplicatesSpike, func(ctx context.Context, q *db.Queries, now time.Time) ([]Finding, error) {
			return duplicateSpikes(ctx, q, cfg.DuplicateSpikeMin, now)
		}},
		{IntakeRefusing, func(ctx context.Context, q *db.Queries, now time.Time) ([]Finding, error) {
			return intakeRefusing(ctx, q, cfg.RefusalsMin, now)
		}},
		{SecretExpiring, secretsExpiring},
		{HousekeepingFailing, func(ctx context.Context, q *db.Queries, _ time.Time) ([]Finding, error) {
			return housekeepingFailing(ctx, q)
		}},
		{InterchangeGap, func(ctx context.Context, q *db.Queries, now time.Time) ([]Finding, error) {
			return interchangeGaps(ctx, q, now.Add(-cfg.InterchangeGapAfter))
		}},
		{DatabaseUnprotected, alone.databaseUnprotected},
	}
}

// where names a tenant's environment in one line.
func where(tenant, environment string) string {
	if environment == "" {
		return "tenant " + tenant
	}
	return fmt.Sprintf("tenant %s, environment %s", tenant, environment)
}

func destinationLine(id int64, url string) string {
	return fmt.Sprintf("destination #%d %s", id, identifier.Visible(url))
}

func destinationSubject(id int64) Subject {
	return Subject{Kind: SubjectDestination, Key: strconv.FormatInt(id, 10)}
}

func destinationsFailing(ctx context.Context, q *db.Queries, failingBefore time.Time) ([]Finding, error) {
	rows, err := q.DestinationListFailing(ctx, failingBefore)
	if err != nil {
		return nil, fmt.Errorf("list failing destinations: %w", err)
	}
	var out []Finding
	for _, r := range rows {
		f := Finding{
			TenantID: &r.TenantID, Subject: destinationSubject(r.ID),
			Title:   fmt.Sprintf("Destination #%d of %s/%s is failing", r.ID, r.TenantSlug, r.EnvironmentSlug),
			Details: Details{Lines: []string{where(r.TenantSlug, r.EnvironmentSlug), destinationLine(r.ID, r.Url)}, Count: r.FailedDeliveries},
		}
		if r.FailingSince != nil && !r.FailingSince.After(failingBefore) {
			f.Details.Since = r.FailingSince
			f.Details.Lines = append(f.Details.Lines, "every attempt has failed since "+timeText(*r.FailingSince))
		}
		if r.FailedDeliveries > 0 {
			f.Details.Lines = append(f.Details.Lines, fmt.Sprintf("%d deliveries failed and wait for an admin's retry", r.FailedDeliveries))
		}
		out = append(out, f)
	}
	return out, nil
}

func deliveriesLagging(ctx context.Context, q *db.Queries, lag time.Duration, now time.Time) ([]Finding, error) {
	rows, err := q.DeliveryListLagging(ctx, now.Add(-lag))
	if err != nil {
		return nil, fmt.Errorf("list lagging destinations: %w", err)
	}
	out := make([]Finding, len(rows))
	for i, r := range rows {
		out[i] = Finding{
			TenantID: &r.TenantID, Subject: destinationSubject(r.ID),
			Title: fmt.Sprintf("Deliveries to destination #%d of %s/%s are lagging", r.ID, r.TenantSlug, r.EnvironmentSlug),
			Details: Details{Since: &r.Oldest, Count: r.Waiting, Lines: []string{
				where(r.TenantSlug, r.EnvironmentSlug), destinationLine(r.ID, r.Url),
				"the oldest pending delivery was created " + timeText(r.Oldest),
				fmt.Sprintf("%d deliveries have waited longer than %s", r.Waiting, lag),
			}},
		}
	}
	return out, nil
}

func destinationsAutoPaused(ctx context.Context, q *db.Queries) ([]Finding, error) {
	rows, err := q.DestinationListAutoPaused(ctx)
	if err != nil {
		return nil, fmt.Errorf("list auto-paused destinations: %w", err)
	}
	out := make([]Finding, len(rows))
	for i, r := range rows {
		lines := []string{where(r.TenantSlug, r.EnvironmentSlug), destinationLine(r.ID, r.Url), "paused " + timeText(r.AutoPausedAt)}
		if r.FailingSince != nil {
			lines = append(lines, "every attempt had failed since "+timeText(*r.FailingSince))
		}
		lines = append(lines, "resume it on the destinations page once it answers again")
		out[i] = Finding{
			TenantID: &r.TenantID, Subject: destinationSubject(r.ID),
			Title:   fmt.Sprintf("Destination #%d of %s/%s was paused: every attempt failed", r.ID, r.TenantSlug, r.EnvironmentSlug),
			Details: Details{Since: &r.AutoPausedAt, Lines: lines},
		}
	}
	return out, nil
}

func duplicateSpikes(ctx context.Context, q *db.Queries, minBlocked int64, now time.Time) ([]Finding, error) {
	rows, err := q.TrafficBlockedSpikes(ctx, db.TrafficBlockedSpikesParams{HourAgo: now.Add(-time.Hour), MinBlocked: minBlocked})
	if err != nil {
		return nil, fmt.Errorf("count duplicates blocked: %w", err)
	}
	out := make([]Finding, len(rows))
	for i, r := range rows {
		out[i] = Finding{
			TenantID: &r.TenantID, Subject: Subject{Kind: SubjectMessageType, Key: strconv.FormatInt(r.MessageTypeID, 10)},
			Title: fmt.Sprintf("Duplicates of %s of %s spike", r.MessageTypeCode, r.TenantSlug),
			Details: Details{Count: r.Blocked, Lines: []string{
				where(r.TenantSlug, "") + ", message type " + r.MessageTypeCode,
				fmt.Sprintf("%d duplicates blocked in the last hour", r.Blocked),
				fmt.Sprintf("%.1f an hour on average over the 7 days before", r.HourlyAverage),
			}},
		}
	}
	return out, nil
}

func intakeRefusing(ctx context.Context, q *db.Queries, minRefusals int64, now time.Time) ([]Finding, error) {
	rows, err := q.IntakeRefusalListFrequent(ctx, db.IntakeRefusalListFrequentParams{
		Since: now.Add(-refusalWindow), MinRefusals: minRefusals,
	})
	if err != nil {
		return nil, fmt.Errorf("count refused requests: %w", err)
	}
	out := make([]Finding, len(rows))
	for i, r := range rows {
		who := "API key #" + r.SubjectKey
		if r.SubjectKind == SubjectIntegration {
			who = "integration " + r.SubjectKey
		}
		out[i] = Finding{
			TenantID: &r.TenantID, Subject: Subject{Kind: r.SubjectKind, Key: r.SubjectKey},
			Title: fmt.Sprintf("Requests of %s of %s are refused", who, r.TenantSlug),
			Details: Details{Since: &r.FirstMinute, Count: r.Refusals, Lines: []string{
				where(r.TenantSlug, r.EnvironmentSlug), who,
				fmt.Sprintf("%d answers of 400, 401, 403, 413, 415 or 422 in %s, since %s", r.Refusals, refusalWindow,
					timeText(r.FirstMinute)),
				"the sender is likely misconfigured: see the ingest log lines of its requests",
			}},
		}
	}
	return out, nil
}

func secretsExpiring(ctx context.Context, q *db.Queries, now time.Time) ([]Finding, error) {
	keys, err := q.APIKeyListExpiring(ctx, db.APIKeyListExpiringParams{Now: now, Until: now.Add(expiryNotice)})
	if err != nil {
		return nil, fmt.Errorf("list expiring API keys: %w", err)
	}
	secrets, err := q.IntegrationSecretListExpiring(ctx, db.IntegrationSecretListExpiringParams{Now: now, Until: now.Add(expiryNotice)})
	if err != nil {
		return nil, fmt.Errorf("list expiring integration secrets: %w", err)
	}
	var out []Finding
	for _, k := range keys {
		out = append(out, Finding{
			TenantID: &k.TenantID, Subject: Subject{Kind: SubjectAPIKey, Key: strconv.FormatInt(k.ID, 10)},
			Title: fmt.Sprintf("API key #%d of %s/%s stops working at %s", k.ID, k.TenantSlug, k.EnvironmentSlug, timeText(k.EndsAt)),
			Details: Details{Since: &k.EndsAt, Lines: []string{
				where(k.TenantSlug, k.EnvironmentSlug), fmt.Sprintf("API key #%d (%s…)", k.ID, k.KeyPrefix),
				"its rotation grace ends " + timeText(k.EndsAt) + ": senders still using it must switch to the new key",
			}},
		})
	}
	for _, s := range secrets {
		out = append(out, Finding{
			TenantID: &s.TenantID, Subject: Subject{Kind: SubjectIntegrationSecret, Key: strconv.FormatInt(s.ID, 10)},
			Title: fmt.Sprintf("A secret of integration %s of %s/%s stops working at %s", s.IntegrationID, s.TenantSlug,
				s.EnvironmentSlug, timeText(s.EndsAt)),
			Details: Details{Since: &s.EndsAt, Lines: []string{
				where(s.TenantSlug, s.EnvironmentSlug), fmt.Sprintf("integration %s (%s), secret #%d", s.IntegrationID, s.MessageTypeCode, s.ID),
				"its rotation grace ends " + timeText(s.EndsAt) + ": the sender must sign with the new secret",
			}},
		})
	}
	return out, nil
}

func housekeepingFailing(ctx context.Context, q *db.Queries) ([]Finding, error) {
	sweeps, err := q.RetentionSweepListFailing(ctx, housekeepingTries)
	if err != nil {
		return nil, fmt.Errorf("list failing retention sweeps: %w", err)
	}
	rollups, err := q.TrafficRollupFailing(ctx, housekeepingTries)
	if err != nil {
		return nil, fmt.Errorf("read the traffic rollup's rounds: %w", err)
	}
	var out []Finding
	for _, s := range sweeps {
		out = append(out, Finding{
			Subject: Subject{Kind: SubjectHousekeeping, Key: "retention:" + s.Kind},
			Title:   fmt.Sprintf("The retention sweep of %s failed %d rounds in a row", s.Kind, s.FailedRounds),
			Details: Details{Count: int64(s.FailedRounds), Lines: []string{
				fmt.Sprintf("%d rounds in a row, the last at %s", s.FailedRounds, timeText(s.FinishedAt)),
				"last error: " + identifier.Visible(s.Error),
			}},
		})
	}
	for _, r := range rollups {
		lines := []string{fmt.Sprintf("%d rounds in a row", r.FailedRounds), "last error: " + identifier.Visible(r.LastError)}
		if r.LastRoundAt != nil {
			lines[0] += ", the last at " + timeText(*r.LastRoundAt)
		}
		out = append(out, Finding{
			Subject: Subject{Kind: SubjectHousekeeping, Key: "rollup"},
			Title:   fmt.Sprintf("The traffic rollup failed %d rounds in a row", r.FailedRounds),
			Details: Details{Count: int64(r.FailedRounds), Lines: lines},
		})
	}
	return out, nil
}

func interchangeGaps(ctx context.Context, q *db.Queries, missingBefore time.Time) ([]Finding, error) {
	rows, err := q.PartnerListGaps(ctx, db.PartnerListGapsParams{MissingBefore: missingBefore, GapsShown: partner.GapsShown})
	if err != nil {
		return nil, fmt.Errorf("list missing interchanges: %w", err)
	}
	out := make([]Finding, len(rows))
	for i, r := range rows {
		pair := fmt.Sprintf("%s from %s to %s", strings.ToUpper(r.Standard), r.Sender, r.Receiver)
		out[i] = Finding{
			TenantID: &r.TenantID, Subject: Subject{Kind: SubjectPartner, Key: strconv.FormatInt(r.ID, 10)},
			Title: fmt.Sprintf("Interchanges of %s/%s are missing: %s", r.TenantSlug, r.EnvironmentSlug, pair),
			Details: Details{Since: &r.MissingSince, Count: r.OpenGaps, Lines: []string{
				where(r.TenantSlug, r.EnvironmentSlug), pair,
				fmt.Sprintf("%d control numbers skipped and missing since %s: %s", r.OpenGaps, timeText(r.MissingSince),
					partner.Numbers(r.FirstGaps, r.OpenGaps)),
				"ask the sender to send them again, or whether it skipped them on purpose",
			}},
		}
	}
	return out, nil
}

// aloneSince remembers since when this evaluator's rounds have found the
// primary without a synchronous standby although it has standbys to wait
// for; the database keeps no such time. Every replica evaluates a round
// every ALERT_EVAL_INTERVAL, so each one's memory covers the whole time.
type aloneSince struct {
	mu sync.Mutex
	at time.Time // zero while protected, or a single server
}

// databaseUnprotected finds the primary alone once it has been so for
// unprotectedHold, and from then on until a standby confirms commits
// again. An alert opened before this process started stays open at once,
// so that a restart does not resolve it for the hold's length.
func (a *aloneSince) databaseUnprotected(ctx context.Context, q *db.Queries, now time.Time) ([]Finding, error) {
	s, err := replication.Read(ctx, q)
	if err != nil {
		return nil, fmt.Errorf("read the primary's replication state: %w", err)
	}
	since, alone := a.observe(s, now)
	if !alone {
		return nil, nil
	}
	if now.Sub(since) < unprotectedHold {
		open, err := q.AlertListUnresolvedOfRule(ctx, DatabaseUnprotected)
		if err != nil || len(open) == 0 {
			return nil, err
		}
	}
	return []Finding{{
		Subject: Subject{Kind: SubjectDatabase, Key: "primary"},
		Title:   "The database has no synchronous standby: acknowledged messages are on one machine",
		Details: Details{Since: &since, Lines: []string{
			"no standby has confirmed commits since " + timeText(since) + "; intake answers 503 meanwhile (REQUIRE_SYNCHRONOUS_STANDBY, the default), or, with REQUIRE_SYNCHRONOUS_STANDBY=false, acknowledges messages that are on the primary's machine alone",
			"the primary has standbys to wait for (synchronous_standby_names, or a standby's replication slot), yet none is synchronous now",
			"bring the standby back (pg_autoctl run on its node; locally scripts/ha.sh back)",
		}},
	}}, nil
}

// observe records s, read at now, and says since when the primary has been
// alone, if it is.
func (a *aloneSince) observe(s replication.State, now time.Time) (time.Time, bool) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if s.Protected() || !s.Configured {
		a.at = time.Time{}
		return time.Time{}, false
	}
	if a.at.IsZero() {
		a.at = now
	}
	return a.at, true
}
