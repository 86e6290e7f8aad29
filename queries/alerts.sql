-- Alerts (migration 023): opened, reminded and resolved by the evaluator
-- (internal/alert), acknowledged by an admin. Every read for a signed-in
-- user takes its scope: NULL for a global user, who sees every alert;
-- otherwise the tenant's, which never includes a global alert.

-- AlertEvaluationLock makes the round the only one running, or says false
-- when another replica's round holds it; that round does the work. The
-- key space 4 is the evaluator's (1 and 2: sign-ins, 3: the rollup).
-- name: AlertEvaluationLock :one
SELECT pg_try_advisory_xact_lock(4, 0) AS locked;

-- AlertEvaluationLimits bounds every statement of the round's transaction,
-- so that a rule whose query hangs, or waits on a lock, fails alone and
-- the round goes on to the next rule.
-- name: AlertEvaluationLimits :exec
SELECT set_config('statement_timeout', '10s', true), set_config('lock_timeout', '5s', true);

-- AlertListUnresolvedOfRule lists a rule's open and acknowledged alerts,
-- which the round compares with what the rule finds now.
-- name: AlertListUnresolvedOfRule :many
SELECT id, tenant_id, subject_kind, subject_key, state, title, details, last_notified_at
FROM alerts WHERE rule = @rule AND state <> 'resolved'
ORDER BY id;

-- AlertOpen opens an alert, unless one of the rule and subject is
-- unresolved already (alerts_one_unresolved): then it returns no row,
-- and the caller, which lost a race, notifies nobody.
-- name: AlertOpen :one
INSERT INTO alerts (tenant_id, rule, subject_kind, subject_key, title, details, opened_at, last_notified_at)
VALUES (sqlc.narg(tenant_id), @rule, @subject_kind, @subject_key, @title, @details, @now, @now)
ON CONFLICT (rule, subject_kind, subject_key) WHERE state <> 'resolved' DO NOTHING
RETURNING id;

-- AlertRemind moves an open alert's last notification to now when its
-- reminder is due (last_notified_at at or before due_before), with the
-- latest finding; no row when it is not due, acknowledged or resolved,
-- or another round reminded first.
-- name: AlertRemind :one
UPDATE alerts SET last_notified_at = @now, title = @title, details = @details
WHERE id = @id AND state = 'open' AND last_notified_at <= @due_before
RETURNING id;

-- AlertUpdateFinding keeps an unresolved alert's finding current (the
-- counts grow while it lasts), writing only when it changed.
-- name: AlertUpdateFinding :exec
UPDATE alerts SET title = @title, details = @details
WHERE id = @id AND state <> 'resolved' AND (title, details) IS DISTINCT FROM (@title::text, @details::jsonb);

-- AlertResolve resolves an alert whose condition cleared; no row when it
-- is resolved already (another round's work).
-- name: AlertResolve :one
UPDATE alerts SET state = 'resolved', resolved_at = @now::timestamptz
WHERE id = @id AND state <> 'resolved'
RETURNING id, tenant_id, rule, subject_kind, subject_key, title, details;

-- AlertAcknowledge acknowledges an open alert within the user's scope:
-- no more reminders. No row when it is not open or outside the scope.
-- name: AlertAcknowledge :one
UPDATE alerts SET state = 'acknowledged', acknowledged_at = now(), acknowledged_by = @user_id::bigint
WHERE id = @id AND state = 'open'
  AND (sqlc.narg(scope_tenant_id)::bigint IS NULL OR tenant_id = sqlc.narg(scope_tenant_id))
RETURNING id, tenant_id, rule, subject_kind, subject_key, title;

-- AlertList lists the alerts within the scope that match every filter
-- given (NULL matches anything), newest opened first, a page at a time.
-- name: AlertList :many
SELECT a.id, a.tenant_id, t.slug AS tenant_slug, a.rule, a.subject_kind, a.subject_key, a.state, a.title,
       a.details, a.opened_at, a.acknowledged_at, a.resolved_at, a.last_notified_at
FROM alerts a
LEFT JOIN tenants t ON t.id = a.tenant_id
WHERE (sqlc.narg(scope_tenant_id)::bigint IS NULL OR a.tenant_id = sqlc.narg(scope_tenant_id))
  AND (sqlc.narg(tenant_id)::bigint IS NULL OR a.tenant_id = sqlc.narg(tenant_id))
  AND (sqlc.narg(state)::text IS NULL OR a.state = sqlc.narg(state))
  AND (sqlc.narg(rule)::text IS NULL OR a.rule = sqlc.narg(rule))
  AND (sqlc.narg(since)::timestamptz IS NULL OR a.opened_at >= sqlc.narg(since))
  AND (sqlc.narg(until)::timestamptz IS NULL OR a.opened_at < sqlc.narg(until))
  AND (sqlc.narg(before_time)::timestamptz IS NULL
       OR (a.opened_at, a.id) < (sqlc.narg(before_time)::timestamptz, sqlc.narg(before_id)::bigint))
ORDER BY a.opened_at DESC, a.id DESC
LIMIT @page_size;

-- AlertListUnresolved lists the open alerts within the scope, then the
-- acknowledged ones, newest first, for the dashboard.
-- name: AlertListUnresolved :many
SELECT a.id, a.tenant_id, t.slug AS tenant_slug, a.rule, a.subject_kind, a.subject_key, a.state, a.title,
       a.details, a.opened_at, a.acknowledged_at, a.resolved_at, a.last_notified_at
FROM alerts a
LEFT JOIN tenants t ON t.id = a.tenant_id
WHERE a.state <> 'resolved'
  AND (sqlc.narg(scope_tenant_id)::bigint IS NULL OR a.tenant_id = sqlc.narg(scope_tenant_id))
ORDER BY a.state = 'acknowledged', a.opened_at DESC, a.id DESC
LIMIT @max_rows;

-- AlertGet returns one alert within the scope, with who acknowledged it.
-- name: AlertGet :one
SELECT a.id, a.tenant_id, t.slug AS tenant_slug, a.rule, a.subject_kind, a.subject_key, a.state, a.title,
       a.details, a.opened_at, a.acknowledged_at, a.resolved_at, a.last_notified_at,
       u.email AS acknowledged_by_email
FROM alerts a
LEFT JOIN tenants t ON t.id = a.tenant_id
LEFT JOIN users u ON u.id = a.acknowledged_by
WHERE a.id = @id AND (sqlc.narg(scope_tenant_id)::bigint IS NULL OR a.tenant_id = sqlc.narg(scope_tenant_id));
