-- +goose Up
-- The dashboard's counts, rolled up per tenant, message type and UTC hour by
-- internal/rollup as traffic arrives, so that the dashboard reads a few
-- thousand small rows whatever the size of messages and audit_events.
-- They count traffic received, so they stay when messages and audit events
-- expire. Ingest never writes here: a counter updated by every ingest
-- transaction would make concurrent inserts of one type wait for each
-- other; a periodic step aggregates what arrived instead.

-- traffic_rollup_state is one row: rolled_up_to is the watermark, the time
-- below which every message (received_at) and blocked duplicate
-- (created_at) is counted in the tables below, and nothing at or after it
-- is. The dashboard counts what came after it from the tables themselves.
CREATE TABLE traffic_rollup_state (
    one          boolean PRIMARY KEY DEFAULT true CHECK (one),
    rolled_up_to timestamptz NOT NULL
);
INSERT INTO traffic_rollup_state (rolled_up_to) VALUES ('-infinity');

-- traffic_rollup_target is the time a step may roll up to (see
-- TrafficRollupTarget in queries/traffic_rollups.sql): below every
-- transaction in progress, and lag below now.
CREATE FUNCTION traffic_rollup_target(lag interval) RETURNS timestamptz
LANGUAGE sql STABLE AS $$
    SELECT least(now() - lag,
                 (SELECT min(a.xact_start) FROM pg_stat_activity a
                  WHERE a.datname = current_database() AND a.backend_type = 'client backend'
                    AND a.pid <> pg_backend_pid() AND a.xact_start IS NOT NULL))
$$;

-- traffic_edge_end is where the rolled-up part of the hour that a window
-- starting at start begins in ends: the end of that hour, or the
-- watermark when it is earlier (see TrafficMessageCounts).
CREATE FUNCTION traffic_edge_end(start timestamptz) RETURNS timestamptz
LANGUAGE sql STABLE AS $$
    SELECT least(date_trunc('hour', start, 'UTC') + interval '1 hour', (SELECT rolled_up_to FROM traffic_rollup_state))
$$;

-- Messages stored, per tenant, type and hour.
CREATE TABLE traffic_messages_hourly (
    tenant_id       bigint NOT NULL,
    message_type_id bigint NOT NULL,
    hour            timestamptz NOT NULL CHECK (date_trunc('hour', hour, 'UTC') = hour),
    messages        bigint NOT NULL,
    PRIMARY KEY (tenant_id, hour, message_type_id)
);
CREATE INDEX traffic_messages_hourly_hour ON traffic_messages_hourly (hour);

-- Duplicates blocked (message.duplicate_blocked events), per tenant, type,
-- hour and the two splits the dashboard shows: how the copy was recognised
-- (mode) and how its content compared with the original's (content), ''
-- where an event does not say. An event without a type (none is written
-- so) counts under message_type_id 0.
CREATE TABLE traffic_blocked_hourly (
    tenant_id       bigint NOT NULL,
    message_type_id bigint NOT NULL,
    hour            timestamptz NOT NULL CHECK (date_trunc('hour', hour, 'UTC') = hour),
    mode            text NOT NULL,
    content         text NOT NULL,
    blocked         bigint NOT NULL,
    PRIMARY KEY (tenant_id, hour, message_type_id, mode, content)
);
CREATE INDEX traffic_blocked_hourly_hour ON traffic_blocked_hourly (hour);

-- +goose Down
DROP TABLE traffic_blocked_hourly;
DROP TABLE traffic_messages_hourly;
DROP TABLE traffic_rollup_state;
DROP FUNCTION traffic_rollup_target;
DROP FUNCTION traffic_edge_end;
