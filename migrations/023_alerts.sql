-- +goose Up
-- Alerts (internal/alert): a rule's finding about one subject (a
-- destination, a message type, an API key, …), open from the round that
-- first found it until the round that no longer does. tenant_id is the
-- subject's tenant, NULL for a global alert (housekeeping).
CREATE TABLE alerts (
    id               bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    tenant_id        bigint REFERENCES tenants (id),
    rule             text NOT NULL CHECK (rule ~ '^[a-z_]{1,32}\.[a-z_]{1,32}$'),
    -- What the alert is about: a kind (destination, message_type, api_key,
    -- integration, integration_secret, housekeeping) and the subject's id
    -- or name within the kind.
    subject_kind     text NOT NULL CHECK (subject_kind ~ '^[a-z_]{1,32}$'),
    subject_key      text NOT NULL CHECK (length(subject_key) BETWEEN 1 AND 200),
    state            text NOT NULL DEFAULT 'open' CHECK (state IN ('open', 'acknowledged', 'resolved')),
    -- What and where, one line, as the notifications say it.
    title            text NOT NULL CHECK (length(title) BETWEEN 1 AND 500),
    -- The latest finding: the lines a notification lists (where, since
    -- when, how many) and the counts behind them.
    details          jsonb NOT NULL DEFAULT '{}' CHECK (jsonb_typeof(details) = 'object'),
    opened_at        timestamptz NOT NULL,
    acknowledged_at  timestamptz,
    acknowledged_by  bigint REFERENCES users (id),
    resolved_at      timestamptz,
    -- When the last notification (opened or reminder) was queued; the next
    -- reminder is due ALERT_RENOTIFY after it while the alert is open.
    last_notified_at timestamptz NOT NULL,
    CHECK ((state = 'resolved') = (resolved_at IS NOT NULL)),
    CHECK (state = 'open' OR state = 'resolved' OR acknowledged_at IS NOT NULL)
);
-- At most one unresolved alert per rule and subject: the database, not the
-- evaluator, decides, so that two replicas evaluating at once open one
-- alert and notify once (the second insert finds the first and does
-- nothing).
CREATE UNIQUE INDEX alerts_one_unresolved ON alerts (rule, subject_kind, subject_key) WHERE state <> 'resolved';
-- The admin's list, newest first, for a global user and per tenant.
CREATE INDEX alerts_opened ON alerts (opened_at DESC, id DESC);
CREATE INDEX alerts_tenant_opened ON alerts (tenant_id, opened_at DESC, id DESC);

-- What the rules need to know of destinations without reading their
-- attempts: failing_since is the start of the first failed attempt since
-- the last one that succeeded (NULL: the last attempt succeeded, or none
-- was made), written only when it changes, so that attempts of one
-- destination do not queue on its row. auto_paused_at is when
-- DESTINATION_AUTO_PAUSE_AFTER paused it, resumed_at when an admin last
-- resumed it: a resumed destination is given that long again.
ALTER TABLE destinations
    ADD COLUMN failing_since  timestamptz,
    ADD COLUMN auto_paused_at timestamptz,
    ADD COLUMN resumed_at     timestamptz;
-- Failed deliveries wait for an admin; they are few, and the rule
-- destination.failing looks for them every round.
CREATE INDEX deliveries_destination_failed ON deliveries (destination_id) WHERE status = 'failed';

-- Rounds of housekeeping that failed in a row, for housekeeping.failing:
-- per kind of retention sweep, and for the traffic rollup.
ALTER TABLE retention_sweeps ADD COLUMN failed_rounds integer NOT NULL DEFAULT 0 CHECK (failed_rounds >= 0);
ALTER TABLE traffic_rollup_state
    ADD COLUMN failed_rounds integer NOT NULL DEFAULT 0 CHECK (failed_rounds >= 0),
    ADD COLUMN last_error    text NOT NULL DEFAULT '' CHECK (length(last_error) <= 500),
    ADD COLUMN last_round_at timestamptz;

-- Ingest answers of 400/401/403/413/415/422 per API key or integration and
-- minute, for intake.refusing. Each server counts them in memory and adds
-- its counts here every few seconds (internal/refusal), so a refused
-- request writes nothing; only authenticated keys and known integrations
-- are counted, which bounds the rows by the configuration, not by what
-- clients send. Rows older than a day are deleted by the evaluator.
CREATE TABLE intake_refusals (
    subject_kind text NOT NULL CHECK (subject_kind IN ('api_key', 'integration')),
    subject_key  text NOT NULL CHECK (length(subject_key) BETWEEN 1 AND 64),
    minute       timestamptz NOT NULL CHECK (date_trunc('minute', minute, 'UTC') = minute),
    tenant_id    bigint NOT NULL,
    refusals     integer NOT NULL CHECK (refusals > 0),
    PRIMARY KEY (subject_kind, subject_key, minute)
);
CREATE INDEX intake_refusals_minute ON intake_refusals (minute);

-- secret.expiring looks for keys and secrets whose rotation grace ends
-- soon: the few with an end at all.
CREATE INDEX api_keys_revoked ON api_keys (revoked_at) WHERE revoked_at IS NOT NULL;
CREATE INDEX integration_secrets_expires ON integration_secrets (expires_at) WHERE expires_at IS NOT NULL;

-- +goose Down
DROP INDEX integration_secrets_expires;
DROP INDEX api_keys_revoked;
DROP TABLE intake_refusals;
ALTER TABLE traffic_rollup_state DROP COLUMN failed_rounds, DROP COLUMN last_error, DROP COLUMN last_round_at;
ALTER TABLE retention_sweeps DROP COLUMN failed_rounds;
DROP INDEX deliveries_destination_failed;
ALTER TABLE destinations DROP COLUMN failing_since, DROP COLUMN auto_paused_at, DROP COLUMN resumed_at;
DROP TABLE alerts;
