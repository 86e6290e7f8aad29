-- The traffic rollups of migration 016: internal/rollup moves the watermark
-- (traffic_rollup_state.rolled_up_to) forward and adds what arrived below
-- it to the hourly tables; internal/dashboard reads the hours, and counts
-- from messages and audit_events only what the hours cannot say: the
-- traffic since the watermark and the part of the hour a window starts in.
-- Every step holds the advisory lock (3, 0) (the key spaces 1 and 2 are the
-- sign-in locks of AuditEventLoginLock), so replicas roll up one at a time
-- and the watermark moves with the counts it covers.

-- TrafficRollupTarget is the time the next step may roll up to: every row
-- stamped before it must have committed. A message's received_at and an
-- event's created_at are the start of the transaction that writes them, so
-- a row still to commit is stamped no earlier than the oldest transaction in
-- progress: the target stays below every open transaction's start (of the
-- sessions this role may see), and lag below now (the longest a request may
-- run, for sessions it may not see). It must run before, and apart from,
-- the step's transaction: a transaction that commits between this
-- statement and the step's snapshot was open here, so the step sees every
-- row stamped before the target.
-- name: TrafficRollupTarget :one
SELECT traffic_rollup_target(make_interval(secs => @lag_seconds::float8))::timestamptz AS target;

-- TrafficRollupLock makes the step the only one running, or says false
-- when another replica's step (or a late count, TrafficRollupLateLock)
-- holds the lock; the step then leaves the work to it.
-- name: TrafficRollupLock :one
SELECT pg_try_advisory_xact_lock(3, 0) AS locked;

-- TrafficRollupStart is where the step starts: the watermark, or, before
-- the first step, the oldest message or blocked duplicate, or the step's
-- target when there is none (so that the first step has nothing to add).
-- name: TrafficRollupStart :one
SELECT CASE WHEN s.rolled_up_to > '-infinity' THEN s.rolled_up_to
            ELSE coalesce(least((SELECT min(received_at) FROM messages),
                                (SELECT min(created_at) FROM audit_events WHERE action = 'message.duplicate_blocked')),
                          @target::timestamptz)
       END::timestamptz AS start
FROM traffic_rollup_state s;

-- TrafficRollupMessages adds the messages received in [from, upto) to
-- their hours (a range of messages_time).
-- name: TrafficRollupMessages :exec
INSERT INTO traffic_messages_hourly (tenant_id, message_type_id, hour, messages)
SELECT m.tenant_id, m.message_type_id, date_trunc('hour', m.received_at, 'UTC'), count(*)
FROM messages m
WHERE m.received_at >= @from_time AND m.received_at < @upto
GROUP BY 1, 2, 3
ON CONFLICT (tenant_id, hour, message_type_id)
DO UPDATE SET messages = traffic_messages_hourly.messages + excluded.messages;

-- TrafficRollupBlocked adds the duplicates blocked in [from, upto) to their
-- hours, split by mode and content (a range of the primary key, (created_at, id)).
-- An event without a type or tenant (none is written so) counts under 0.
-- name: TrafficRollupBlocked :exec
INSERT INTO traffic_blocked_hourly (tenant_id, message_type_id, hour, blocked, fingerprint, idempotency_key,
                                    identical, shape_only, changed)
SELECT coalesce(e.tenant_id, 0), coalesce(e.message_type_id, 0), date_trunc('hour', e.created_at, 'UTC'), count(*),
       count(*) FILTER (WHERE e.details->>'mode' = 'fingerprint'),
       count(*) FILTER (WHERE e.details->>'mode' = 'idempotency_key'),
       count(*) FILTER (WHERE e.details->>'content' = 'identical'),
       count(*) FILTER (WHERE e.details->>'content' = 'shape_only'),
       count(*) FILTER (WHERE e.details->>'content' = 'changed')
FROM audit_events e
WHERE e.action = 'message.duplicate_blocked' AND e.created_at >= @from_time AND e.created_at < @upto
GROUP BY 1, 2, 3
ON CONFLICT (tenant_id, hour, message_type_id)
DO UPDATE SET blocked = traffic_blocked_hourly.blocked + excluded.blocked,
              fingerprint = traffic_blocked_hourly.fingerprint + excluded.fingerprint,
              idempotency_key = traffic_blocked_hourly.idempotency_key + excluded.idempotency_key,
              identical = traffic_blocked_hourly.identical + excluded.identical,
              shape_only = traffic_blocked_hourly.shape_only + excluded.shape_only,
              changed = traffic_blocked_hourly.changed + excluded.changed;

-- name: TrafficRollupAdvance :exec
UPDATE traffic_rollup_state SET rolled_up_to = @upto;

-- TrafficRollupLateLock waits for a running step and keeps the next one
-- from starting until the transaction ends, for a writer whose message is
-- stamped with a time of the past (a released blocked copy keeps the time
-- it arrived): the watermark cannot move while it decides who counts it.
-- name: TrafficRollupLateLock :exec
SELECT pg_advisory_xact_lock_shared(3, 0);

-- TrafficRollupLateMessage counts a message stamped below the watermark,
-- which no step will count; one at or above it is left to the steps. Run
-- it after TrafficRollupLateLock, in a statement of its own, so that it
-- reads the watermark a finished step left.
-- name: TrafficRollupLateMessage :exec
INSERT INTO traffic_messages_hourly (tenant_id, message_type_id, hour, messages)
SELECT m.tenant_id, m.message_type_id, date_trunc('hour', m.received_at, 'UTC'), 1
FROM messages m, traffic_rollup_state s
WHERE m.tenant_id = @tenant_id AND m.id = @id AND m.received_at < s.rolled_up_to
ON CONFLICT (tenant_id, hour, message_type_id)
DO UPDATE SET messages = traffic_messages_hourly.messages + 1;

-- The dashboard's counts are the hours inside each window, plus rows read
-- from the tables themselves: the part of the hour a window starts in (its
-- hour starts before the window, so it is left out) up to the watermark,
-- which counts for that window only (a row of it is in the 24 hours or
-- else in the 7 days' first hour), and everything at or after the watermark. Each statement reads the
-- watermark and the hours in one snapshot, and a step commits both at
-- once, so no row is counted twice or missed. A window covers (start,
-- now]. Every read of messages and audit_events is a range of a time index
-- at most an hour long, or the short tail since the watermark: the bounds
-- are written out in each WHERE (not joined from a CTE) so that even a
-- generic plan takes them as index conditions. The planner must also
-- estimate them as short, or it reads a whole table instead, on statistics
-- that are old or missing: the watermark is read by traffic_watermark(),
-- whose value the planner knows (migration 029), and the tail is closed
-- by "< 'infinity'", which excludes no row but makes the bounds a range,
-- estimated at half a percent of the table when a table has no statistics
-- (a lower bound alone is a third).

-- TrafficMessageCounts counts, for every message type within the scope,
-- the messages stored in the last 24 hours and 7 days.
-- name: TrafficMessageCounts :many
WITH counted AS (
    SELECT r.message_type_id, r.hour > now() - interval '24 hours' AS last_day, true AS last_week, r.messages AS n
    FROM traffic_messages_hourly r
    WHERE r.hour > now() - interval '7 days'
      AND (sqlc.narg(scope_tenant_id)::bigint IS NULL OR r.tenant_id = sqlc.narg(scope_tenant_id))
      AND (sqlc.narg(tenant_id)::bigint IS NULL OR r.tenant_id = sqlc.narg(tenant_id))
    UNION ALL
    SELECT m.message_type_id, m.received_at > now() - interval '24 hours', m.received_at <= now() - interval '24 hours', 1
    FROM messages m
    WHERE (m.received_at > now() - interval '24 hours' AND m.received_at < traffic_edge_end(now() - interval '24 hours')
           OR m.received_at > now() - interval '7 days' AND m.received_at < traffic_edge_end(now() - interval '7 days'))
      AND (sqlc.narg(scope_tenant_id)::bigint IS NULL OR m.tenant_id = sqlc.narg(scope_tenant_id))
      AND (sqlc.narg(tenant_id)::bigint IS NULL OR m.tenant_id = sqlc.narg(tenant_id))
    UNION ALL
    SELECT m.message_type_id, m.received_at > now() - interval '24 hours', true, 1
    FROM messages m
    WHERE m.received_at >= traffic_watermark() AND m.received_at < 'infinity'
      AND m.received_at > now() - interval '7 days'
      AND (sqlc.narg(scope_tenant_id)::bigint IS NULL OR m.tenant_id = sqlc.narg(scope_tenant_id))
      AND (sqlc.narg(tenant_id)::bigint IS NULL OR m.tenant_id = sqlc.narg(tenant_id))
), summed AS (
    -- Summed per type before the types are joined: the thousands of hours
    -- and rows are hashed into a few dozen sums, instead of each being
    -- joined to its type and tenant and sorted by them (20 ms against 6
    -- at a million messages a week).
    SELECT c.message_type_id, sum(c.n) FILTER (WHERE c.last_day) AS last_day, sum(c.n) FILTER (WHERE c.last_week) AS last_week
    FROM counted c
    GROUP BY c.message_type_id
)
SELECT mt.id AS message_type_id, t.slug AS tenant_slug, mt.code,
       coalesce(s.last_day, 0)::bigint AS last_day, coalesce(s.last_week, 0)::bigint AS last_week
FROM message_types mt
JOIN tenants t ON t.id = mt.tenant_id
LEFT JOIN summed s ON s.message_type_id = mt.id
WHERE (sqlc.narg(scope_tenant_id)::bigint IS NULL OR mt.tenant_id = sqlc.narg(scope_tenant_id))
  AND (sqlc.narg(tenant_id)::bigint IS NULL OR mt.tenant_id = sqlc.narg(tenant_id))
ORDER BY t.slug, mt.code;

-- TrafficBlockedCounts counts the duplicates blocked since @since (a UTC
-- midnight) for the dashboard, per message type and UTC day, split by
-- mode and content, and says whether they fall into the last 24 hours and
-- the last 7 days. A row without a day adds to a window only: it is the
-- part of the hour a window starts in, whose hour the chart has already.
-- name: TrafficBlockedCounts :many
WITH counted AS (
    SELECT e.message_type_id, NULL::timestamptz AS day,
           e.created_at > now() - interval '24 hours' AS last_day, e.created_at <= now() - interval '24 hours' AS last_week,
           e.details->>'mode' AS mode, e.details->>'content' AS content
    FROM audit_events e
    WHERE e.action = 'message.duplicate_blocked'
      AND (e.created_at > now() - interval '24 hours' AND e.created_at < traffic_edge_end(now() - interval '24 hours')
           OR e.created_at > now() - interval '7 days' AND e.created_at < traffic_edge_end(now() - interval '7 days'))
      AND (sqlc.narg(scope_tenant_id)::bigint IS NULL OR e.tenant_id = sqlc.narg(scope_tenant_id))
      AND (sqlc.narg(tenant_id)::bigint IS NULL OR e.tenant_id = sqlc.narg(tenant_id))
    UNION ALL
    SELECT e.message_type_id, date_trunc('day', e.created_at, 'UTC'),
           e.created_at > now() - interval '24 hours', e.created_at > now() - interval '7 days',
           e.details->>'mode', e.details->>'content'
    FROM audit_events e
    WHERE e.action = 'message.duplicate_blocked'
      AND e.created_at >= traffic_watermark() AND e.created_at < 'infinity' AND e.created_at >= @since
      AND (sqlc.narg(scope_tenant_id)::bigint IS NULL OR e.tenant_id = sqlc.narg(scope_tenant_id))
      AND (sqlc.narg(tenant_id)::bigint IS NULL OR e.tenant_id = sqlc.narg(tenant_id))
)
SELECT c.message_type_id, c.day, c.last_day::boolean AS last_day, c.last_week::boolean AS last_week,
       count(*)::bigint AS blocked,
       count(*) FILTER (WHERE c.mode = 'fingerprint')::bigint AS fingerprint,
       count(*) FILTER (WHERE c.mode = 'idempotency_key')::bigint AS idempotency_key,
       count(*) FILTER (WHERE c.content = 'identical')::bigint AS identical,
       count(*) FILTER (WHERE c.content = 'shape_only')::bigint AS shape_only,
       count(*) FILTER (WHERE c.content = 'changed')::bigint AS changed
FROM counted c
GROUP BY 1, 2, 3, 4
UNION ALL
SELECT nullif(r.message_type_id, 0), date_trunc('day', r.hour, 'UTC'),
       r.hour > now() - interval '24 hours', r.hour > now() - interval '7 days',
       sum(r.blocked)::bigint, sum(r.fingerprint)::bigint, sum(r.idempotency_key)::bigint,
       sum(r.identical)::bigint, sum(r.shape_only)::bigint, sum(r.changed)::bigint
FROM traffic_blocked_hourly r
WHERE r.hour >= @since
  AND (sqlc.narg(scope_tenant_id)::bigint IS NULL OR r.tenant_id = sqlc.narg(scope_tenant_id))
  AND (sqlc.narg(tenant_id)::bigint IS NULL OR r.tenant_id = sqlc.narg(tenant_id))
GROUP BY 1, 2, 3, 4;

-- TrafficRollupRecordRound keeps the outcome of a round of the rollup
-- (error '' when it succeeded) and how many rounds failed in a row, for
-- the rule housekeeping.failing.
-- name: TrafficRollupRecordRound :exec
UPDATE traffic_rollup_state
SET failed_rounds = CASE WHEN @error::text = '' THEN 0 ELSE failed_rounds + 1 END,
    last_error = left(@error::text, 500), last_round_at = now();

-- TrafficRollupFailing returns the rollup's state when at least
-- min_rounds rounds failed in a row; no row otherwise.
-- name: TrafficRollupFailing :many
SELECT failed_rounds, last_error, last_round_at FROM traffic_rollup_state WHERE failed_rounds >= @min_rounds;

-- TrafficBlockedSpikes lists the message types whose duplicates blocked
-- since hour_ago (an hour before now) number more than min_blocked and more than 5
-- times their hourly average over the 7 days before that hour,
-- for the rule duplicates.spike (factor 5). The last hour is counted as the
-- dashboard counts a window (see above): the hours after its start, the
-- part of the hour it starts in up to the watermark, and what came after
-- the watermark; the week is read from the hours alone.
-- name: TrafficBlockedSpikes :many
WITH recent AS (
    SELECT r.tenant_id, r.message_type_id, r.blocked AS n
    FROM traffic_blocked_hourly r
    WHERE r.hour > sqlc.arg(hour_ago)::timestamptz
    UNION ALL
    SELECT e.tenant_id, e.message_type_id, 1
    FROM audit_events e
    WHERE e.action = 'message.duplicate_blocked'
      AND e.created_at > sqlc.arg(hour_ago)::timestamptz
      AND e.created_at < traffic_edge_end(sqlc.arg(hour_ago)::timestamptz)
    UNION ALL
    SELECT e.tenant_id, e.message_type_id, 1
    FROM audit_events e
    WHERE e.action = 'message.duplicate_blocked'
      AND e.created_at >= traffic_watermark() AND e.created_at < 'infinity'
      AND e.created_at > sqlc.arg(hour_ago)::timestamptz
),
last_hour AS (
    SELECT tenant_id, message_type_id, sum(n)::bigint AS blocked
    FROM recent
    WHERE tenant_id IS NOT NULL AND message_type_id IS NOT NULL
    GROUP BY tenant_id, message_type_id
    HAVING sum(n) > sqlc.arg(min_blocked)::bigint
)
SELECT last_hour.tenant_id, last_hour.message_type_id, last_hour.blocked, (w.blocked / 168.0)::float8 AS hourly_average,
       t.slug AS tenant_slug, mt.code AS message_type_code
FROM last_hour
CROSS JOIN LATERAL (
    SELECT coalesce(sum(r.blocked), 0)::bigint AS blocked
    FROM traffic_blocked_hourly r
    WHERE r.tenant_id = last_hour.tenant_id AND r.message_type_id = last_hour.message_type_id
      AND r.hour >= sqlc.arg(hour_ago)::timestamptz - interval '168 hours' AND r.hour <= sqlc.arg(hour_ago)::timestamptz - interval '1 hour'
) w
JOIN tenants t ON t.id = last_hour.tenant_id
JOIN message_types mt ON mt.tenant_id = last_hour.tenant_id AND mt.id = last_hour.message_type_id
WHERE last_hour.blocked > 5 * w.blocked / 168.0
ORDER BY last_hour.tenant_id, last_hour.message_type_id;
