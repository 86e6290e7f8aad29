-- name: DestinationInsert :one
INSERT INTO destinations (tenant_id, environment_id, url, message_type_ids, secret, max_concurrency)
VALUES (@tenant_id, @environment_id, @url, @message_type_ids::bigint[], @secret, @max_concurrency)
RETURNING id;

-- DestinationListForWorkers lists every destination with what a worker
-- process needs to run its queue: whether it is paused, how many
-- deliveries may run at once, and whether it has any pending delivery
-- (a probe of deliveries_destination_pending).
-- name: DestinationListForWorkers :many
SELECT d.id, d.paused, d.max_concurrency,
       EXISTS (SELECT 1 FROM deliveries dl WHERE dl.destination_id = d.id AND dl.status = 'pending') AS has_pending
FROM destinations d WHERE d.deleted_at IS NULL ORDER BY d.id;

-- DestinationGetForWorkers is DestinationListForWorkers for one destination
-- whose queue was just given a job.
-- name: DestinationGetForWorkers :one
SELECT id, paused, max_concurrency FROM destinations WHERE id = @id AND deleted_at IS NULL;

-- DestinationSetPaused pauses or resumes a destination within the signed-in
-- user's scope (NULL: a global user); it returns no row outside the scope.
-- Either way the destination is no longer one that auto-pause paused; a
-- resumed one is given DESTINATION_AUTO_PAUSE_AFTER again from now.
-- name: DestinationSetPaused :one
UPDATE destinations SET paused = @paused, updated_at = now(), auto_paused_at = NULL,
    resumed_at = CASE WHEN @paused THEN resumed_at ELSE now() END
WHERE id = @id AND deleted_at IS NULL AND (sqlc.narg(scope_tenant_id)::bigint IS NULL OR tenant_id = sqlc.narg(scope_tenant_id))
RETURNING id, tenant_id, paused;

-- DestinationFindByURL finds an environment's destination with a URL, so
-- that the demo creates its destination once, and its signing secret, which
-- the demo hands to its receiver.
-- name: DestinationFindByURL :one
SELECT id, secret FROM destinations
WHERE tenant_id = @tenant_id AND environment_id = @environment_id AND url = @url AND deleted_at IS NULL
ORDER BY id LIMIT 1;

-- DestinationListForAdmin lists the destinations a signed-in user may see
-- (scope_tenant_id NULL: a global user), or the one with id, with the codes
-- of the message types each takes (none: every type). A deleted one is not
-- listed.
-- name: DestinationListForAdmin :many
SELECT d.id, d.url, d.paused, d.auto_paused_at, d.max_concurrency, d.created_at, d.updated_at,
       t.slug AS tenant_slug, e.slug AS environment_slug,
       ARRAY(SELECT mt.code FROM message_types mt
             WHERE mt.tenant_id = d.tenant_id AND mt.id = ANY(d.message_type_ids) ORDER BY mt.code)::text[] AS message_types
FROM destinations d
JOIN tenants t ON t.id = d.tenant_id
JOIN environments e ON e.tenant_id = d.tenant_id AND e.id = d.environment_id
WHERE (sqlc.narg(scope_tenant_id)::bigint IS NULL OR d.tenant_id = sqlc.narg(scope_tenant_id))
  AND (sqlc.narg(id)::bigint IS NULL OR d.id = sqlc.narg(id))
  AND d.deleted_at IS NULL
ORDER BY t.slug, e.slug, d.id;

-- DestinationUpdate changes where a destination sends, what it takes and
-- how many deliveries it takes at once, within the signed-in user's scope;
-- it returns no row outside it. Deliveries already written keep going to
-- the destination; the new URL applies from their next attempt.
-- name: DestinationUpdate :one
UPDATE destinations
SET url = @url, message_type_ids = @message_type_ids::bigint[], max_concurrency = @max_concurrency, updated_at = now()
WHERE id = @id AND deleted_at IS NULL AND (sqlc.narg(scope_tenant_id)::bigint IS NULL OR tenant_id = sqlc.narg(scope_tenant_id))
RETURNING id;


-- DestinationCountOfTenant counts a tenant's destinations, under
-- TenantLock to bound them.
-- name: DestinationCountOfTenant :one
SELECT count(*) FROM destinations WHERE tenant_id = @tenant_id AND deleted_at IS NULL;

-- DestinationListFailing lists the destinations whose every attempt has
-- failed since failing_before or earlier, and those with failed
-- deliveries (a probe of deliveries_destination_failed), for the rule
-- destination.failing.
-- name: DestinationListFailing :many
WITH failed AS (
    SELECT dl.destination_id, count(*) AS failed
    FROM deliveries dl WHERE dl.status = 'failed'
    GROUP BY dl.destination_id
)
SELECT d.id, d.tenant_id, d.url, d.failing_since, t.slug AS tenant_slug, e.slug AS environment_slug,
       coalesce(f.failed, 0)::bigint AS failed_deliveries
FROM destinations d
JOIN tenants t ON t.id = d.tenant_id
JOIN environments e ON e.tenant_id = d.tenant_id AND e.id = d.environment_id
LEFT JOIN failed f ON f.destination_id = d.id
WHERE (d.failing_since <= @failing_before::timestamptz OR f.failed IS NOT NULL) AND d.deleted_at IS NULL
ORDER BY d.id;

-- DestinationListToAutoPause lists the destinations, not paused, whose
-- every attempt has failed since failing_before or earlier, and that no
-- admin resumed since then.
-- name: DestinationListToAutoPause :many
SELECT id FROM destinations
WHERE NOT paused AND deleted_at IS NULL AND failing_since <= @failing_before::timestamptz AND (resumed_at IS NULL OR resumed_at <= @failing_before::timestamptz)
ORDER BY id;

-- DestinationAutoPause pauses a destination for DESTINATION_AUTO_PAUSE_AFTER;
-- no row when it is paused already.
-- name: DestinationAutoPause :one
UPDATE destinations SET paused = true, auto_paused_at = @now::timestamptz, updated_at = now()
WHERE id = @id AND NOT paused
RETURNING id, tenant_id;

-- DestinationListAutoPaused lists the destinations that
-- DESTINATION_AUTO_PAUSE_AFTER paused and no admin resumed.
-- name: DestinationListAutoPaused :many
SELECT d.id, d.tenant_id, d.url, d.failing_since, d.auto_paused_at::timestamptz AS auto_paused_at,
       t.slug AS tenant_slug, e.slug AS environment_slug
FROM destinations d
JOIN tenants t ON t.id = d.tenant_id
JOIN environments e ON e.tenant_id = d.tenant_id AND e.id = d.environment_id
WHERE d.paused AND d.auto_paused_at IS NOT NULL AND d.deleted_at IS NULL
ORDER BY d.id;

-- DestinationDelete marks a destination of the scope deleted (migration
-- 034); no row outside the scope or when it is deleted already. Its
-- message types and URL stay, for the history of its deliveries.
-- name: DestinationDelete :one
UPDATE destinations SET deleted_at = now(), updated_at = now()
WHERE id = @id AND deleted_at IS NULL
  AND (sqlc.narg(scope_tenant_id)::bigint IS NULL OR tenant_id = sqlc.narg(scope_tenant_id))
RETURNING id, tenant_id, url;
