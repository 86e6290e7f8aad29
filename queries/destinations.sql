-- name: DestinationInsert :one
INSERT INTO destinations (tenant_id, environment_id, url, message_type_ids, secret, max_concurrency)
VALUES (@tenant_id, @environment_id, @url, @message_type_ids::bigint[], @secret, @max_concurrency)
RETURNING id;

-- DestinationListForWorkers lists every destination with what a worker
-- process needs to run its queue: whether it is paused and how many
-- deliveries may run at once.
-- name: DestinationListForWorkers :many
SELECT id, paused, max_concurrency FROM destinations ORDER BY id;

-- DestinationSetPaused pauses or resumes a destination within the signed-in
-- user's scope (NULL: a global user); it returns no row outside the scope.
-- name: DestinationSetPaused :one
UPDATE destinations SET paused = @paused, updated_at = now()
WHERE id = @id AND (sqlc.narg(scope_tenant_id)::bigint IS NULL OR tenant_id = sqlc.narg(scope_tenant_id))
RETURNING id, tenant_id, paused;

-- DestinationFindByURL finds an environment's destination with a URL, so
-- that the demo creates its destination once.
-- name: DestinationFindByURL :one
SELECT id FROM destinations WHERE tenant_id = @tenant_id AND environment_id = @environment_id AND url = @url
ORDER BY id LIMIT 1;
