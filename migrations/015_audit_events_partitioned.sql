-- +goose Up
-- audit_events is partitioned by range of created_at, a month to a
-- partition, so that expiry drops whole months (internal/auditpartition)
-- and each index is as large as a month of events. The table as it was is
-- renamed to audit_events_legacy and attached as the partition of
-- everything before the cutoff that 014 proved with a CHECK constraint, so
-- that no row is copied and ATTACH reads no row: everything below is a
-- catalog change, made in one transaction (docs/audit-events.md measures
-- it on a populated database).

-- No foreign key points from audit_events to messages: a message expires
-- (RETENTION_MESSAGES) long before the events about it
-- (RETENTION_AUDIT_EVENTS), and the audit log shows such an event without
-- its message.
ALTER TABLE audit_events DROP CONSTRAINT IF EXISTS audit_events_tenant_id_message_id_fkey;

-- A foreign key into a partitioned table references a unique key that holds
-- the partition key, so a blocked copy now names its event by (created_at,
-- id). The copy's received_at is its event's created_at: both are written by
-- the one statement that blocks the copy (MessageStoreOrBlock), the copy's
-- from the event's. The key refuses a copy that says otherwise, and refuses
-- to detach a partition whose events copies still point at: copies expire
-- first (RETENTION_BLOCKED_COPIES is at most RETENTION_AUDIT_EVENTS).
ALTER TABLE blocked_copies DROP CONSTRAINT blocked_copies_audit_event_id_fkey;

-- The old table's own primary key (id) and the indexes no page or filter
-- needs any more go (docs/audit-events.md lists what each kept index
-- serves): audit_events_time, whose order the new primary key gives;
-- audit_events_match_key, which no query used; and the action indexes of
-- 001, replaced by 014's of the rare actions only. The old table's
-- remaining indexes are those the partitioned table defines below, and are
-- attached as its partition's instead of being built again.
ALTER TABLE audit_events DROP CONSTRAINT audit_events_pkey;
ALTER TABLE audit_events ADD CONSTRAINT audit_events_legacy_pkey PRIMARY KEY USING INDEX audit_events_created_at_id;
DROP INDEX audit_events_time;
DROP INDEX audit_events_match_key;
DROP INDEX audit_events_action_time;
DROP INDEX audit_events_tenant_action_time;
DROP TRIGGER audit_events_append_only ON audit_events;
ALTER TABLE audit_events RENAME TO audit_events_legacy;
ALTER INDEX audit_events_tenant_rare_action_time RENAME TO audit_events_legacy_tenant_action_time;
ALTER INDEX audit_events_rare_action_time RENAME TO audit_events_legacy_action_time;
ALTER INDEX audit_events_tenant_time RENAME TO audit_events_legacy_tenant_time;
ALTER INDEX audit_events_environment_time RENAME TO audit_events_legacy_environment_time;
ALTER INDEX audit_events_message_type_time RENAME TO audit_events_legacy_message_type_time;
ALTER INDEX audit_events_match_key_time RENAME TO audit_events_legacy_match_key_time;
ALTER INDEX audit_events_message RENAME TO audit_events_legacy_message;
ALTER INDEX audit_events_content_time RENAME TO audit_events_legacy_content_time;
ALTER INDEX audit_events_login_failed_email RENAME TO audit_events_legacy_login_failed_email;
ALTER INDEX audit_events_login_failed_addr RENAME TO audit_events_legacy_login_failed_addr;
-- The ids go on from where the old table's left off.
ALTER SEQUENCE audit_events_id_seq RENAME TO audit_events_legacy_id_seq;

-- The constraints are named as the old table's are, which ATTACH matches.
CREATE TABLE audit_events (
    id              bigint GENERATED ALWAYS AS IDENTITY,
    tenant_id       bigint,
    environment_id  bigint,
    message_type_id bigint,
    message_id      bigint,
    action          text NOT NULL,
    actor           text NOT NULL,
    match_key       text,
    details         jsonb NOT NULL DEFAULT '{}',
    created_at      timestamptz NOT NULL DEFAULT now(),
    CONSTRAINT audit_events_pkey PRIMARY KEY (created_at, id),
    CONSTRAINT audit_events_action_check CHECK (action ~ '^[a-z_]+(\.[a-z_]+)+$'),
    CONSTRAINT audit_events_details_check CHECK (jsonb_typeof(details) = 'object'),
    CONSTRAINT audit_events_tenant_id_fkey FOREIGN KEY (tenant_id) REFERENCES tenants (id),
    CONSTRAINT audit_events_tenant_id_environment_id_fkey
        FOREIGN KEY (tenant_id, environment_id) REFERENCES environments (tenant_id, id),
    CONSTRAINT audit_events_tenant_id_message_type_id_fkey
        FOREIGN KEY (tenant_id, message_type_id) REFERENCES message_types (tenant_id, id)
) PARTITION BY RANGE (created_at);
SELECT setval('audit_events_id_seq', s.last_value, s.is_called) FROM audit_events_legacy_id_seq s;
ALTER TABLE audit_events_legacy ALTER COLUMN id DROP IDENTITY;

-- The indexes, each for the pages and filters that docs/audit-events.md
-- names. Every page lists newest first with keyset pagination on
-- (created_at, id); each index ends in that order, so that a page is the
-- first entries of one range, newest partition first.
CREATE INDEX audit_events_tenant_action_time ON audit_events (tenant_id, action, created_at DESC, id DESC)
    WHERE action <> 'message.duplicate_blocked';
CREATE INDEX audit_events_action_time ON audit_events (action, created_at DESC, id DESC)
    WHERE action <> 'message.duplicate_blocked';
CREATE INDEX audit_events_tenant_time ON audit_events (tenant_id, created_at DESC, id DESC);
CREATE INDEX audit_events_environment_time ON audit_events (environment_id, created_at DESC, id DESC)
    WHERE environment_id IS NOT NULL;
CREATE INDEX audit_events_message_type_time ON audit_events (message_type_id, created_at DESC, id DESC)
    WHERE message_type_id IS NOT NULL;
CREATE INDEX audit_events_match_key_time ON audit_events (match_key, created_at DESC, id DESC)
    WHERE match_key IS NOT NULL;
CREATE INDEX audit_events_message ON audit_events (message_id) WHERE message_id IS NOT NULL;
CREATE INDEX audit_events_content_time ON audit_events ((details->>'content'), created_at DESC, id DESC)
    WHERE action = 'message.duplicate_blocked' AND details->>'content' <> 'identical';
CREATE INDEX audit_events_login_failed_email ON audit_events (lower(details->>'email'), created_at)
    WHERE action = 'user.login_failed';
CREATE INDEX audit_events_login_failed_addr ON audit_events ((details->>'remote_addr'), created_at)
    WHERE action = 'user.login_failed';

CREATE TRIGGER audit_events_append_only BEFORE UPDATE OR DELETE ON audit_events
    FOR EACH ROW EXECUTE FUNCTION audit_events_append_only();

-- audit_events_add_partition adds the month of events from lower (a month's
-- start in UTC) as a partition of its own, named after the month, and
-- returns its name. The table is made apart and then attached, which takes
-- a lock that inserts pass (SHARE UPDATE EXCLUSIVE) where CREATE TABLE ...
-- PARTITION OF would stop them; being empty, it is attached at once.
-- internal/auditpartition calls it to keep months ahead of the clock.
-- +goose StatementBegin
CREATE FUNCTION audit_events_add_partition(lower timestamptz) RETURNS text LANGUAGE plpgsql AS $$
DECLARE
    name  text := 'audit_events_p' || to_char(lower AT TIME ZONE 'UTC', 'YYYY_MM');
    upper timestamptz := (lower AT TIME ZONE 'UTC' + interval '1 month') AT TIME ZONE 'UTC';
BEGIN
    EXECUTE format('CREATE TABLE %I (LIKE audit_events INCLUDING DEFAULTS INCLUDING CONSTRAINTS)', name);
    EXECUTE format('ALTER TABLE audit_events ATTACH PARTITION %I FOR VALUES FROM (%L) TO (%L)', name, lower, upper);
    RETURN name;
END
$$;
-- +goose StatementEnd

-- The old table becomes the partition of everything before the cutoff, a
-- month or more ahead, which leaves internal/auditpartition (run by serve at
-- start and every SWEEP_INTERVAL) that long to add the months after it.
-- There is no DEFAULT partition: a partition could not be added, nor one
-- detached concurrently, while it exists (see docs/audit-events.md).
-- +goose StatementBegin
DO $$
DECLARE
    cutoff timestamptz;
BEGIN
    SELECT substring(pg_get_constraintdef(oid) FROM '''([^'']+)''')::timestamptz INTO STRICT cutoff
    FROM pg_constraint
    WHERE conrelid = 'audit_events_legacy'::regclass AND conname = 'audit_events_before_partitioning';
    EXECUTE format('ALTER TABLE audit_events ATTACH PARTITION audit_events_legacy FOR VALUES FROM (MINVALUE) TO (%L)', cutoff);
END
$$;
-- +goose StatementEnd

-- The copies' key into the partitioned table (see above), checked here on
-- every copy kept so far.
ALTER TABLE blocked_copies ADD CONSTRAINT blocked_copies_audit_event_fkey
    FOREIGN KEY (received_at, audit_event_id) REFERENCES audit_events (created_at, id);

-- +goose Down
-- Back to one table: the partitions' rows are copied into the old table
-- (a database that was migrated up has few of them yet), which becomes
-- audit_events again with its identity and keys.
ALTER TABLE blocked_copies DROP CONSTRAINT blocked_copies_audit_event_fkey;
ALTER TABLE audit_events DETACH PARTITION audit_events_legacy;
DROP TRIGGER IF EXISTS audit_events_append_only ON audit_events_legacy;
ALTER TABLE audit_events_legacy DROP CONSTRAINT audit_events_before_partitioning;
INSERT INTO audit_events_legacy SELECT * FROM audit_events;
ALTER TABLE audit_events_legacy ALTER COLUMN id ADD GENERATED ALWAYS AS IDENTITY;
SELECT setval(pg_get_serial_sequence('audit_events_legacy', 'id'), s.last_value, s.is_called) FROM audit_events_id_seq s;
DROP TABLE audit_events;
DROP FUNCTION audit_events_add_partition(timestamptz);
ALTER TABLE audit_events_legacy RENAME TO audit_events;
ALTER SEQUENCE audit_events_legacy_id_seq RENAME TO audit_events_id_seq;
ALTER TABLE audit_events DROP CONSTRAINT audit_events_legacy_pkey;
ALTER TABLE audit_events ADD PRIMARY KEY (id);
ALTER INDEX audit_events_legacy_tenant_action_time RENAME TO audit_events_tenant_rare_action_time;
ALTER INDEX audit_events_legacy_action_time RENAME TO audit_events_rare_action_time;
CREATE INDEX audit_events_tenant_action_time ON audit_events (tenant_id, action, created_at DESC, id DESC);
CREATE INDEX audit_events_action_time ON audit_events (action, created_at DESC, id DESC);
ALTER INDEX audit_events_legacy_tenant_time RENAME TO audit_events_tenant_time;
ALTER INDEX audit_events_legacy_environment_time RENAME TO audit_events_environment_time;
ALTER INDEX audit_events_legacy_message_type_time RENAME TO audit_events_message_type_time;
ALTER INDEX audit_events_legacy_match_key_time RENAME TO audit_events_match_key_time;
ALTER INDEX audit_events_legacy_message RENAME TO audit_events_message;
ALTER INDEX audit_events_legacy_content_time RENAME TO audit_events_content_time;
ALTER INDEX audit_events_legacy_login_failed_email RENAME TO audit_events_login_failed_email;
ALTER INDEX audit_events_legacy_login_failed_addr RENAME TO audit_events_login_failed_addr;
CREATE INDEX audit_events_time ON audit_events (created_at DESC, id DESC);
CREATE INDEX audit_events_match_key ON audit_events (tenant_id, match_key) WHERE match_key IS NOT NULL;
CREATE UNIQUE INDEX audit_events_created_at_id ON audit_events (created_at, id);
ALTER TABLE audit_events ADD FOREIGN KEY (tenant_id, message_id) REFERENCES messages (tenant_id, id);
CREATE TRIGGER audit_events_append_only BEFORE UPDATE OR DELETE ON audit_events
    FOR EACH ROW EXECUTE FUNCTION audit_events_append_only();
ALTER TABLE blocked_copies ADD FOREIGN KEY (audit_event_id) REFERENCES audit_events (id);
