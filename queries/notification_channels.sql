-- name: NotificationChannelInsert :one
INSERT INTO notification_channels (tenant_id, kind, name, target, secret)
VALUES (sqlc.narg(tenant_id), @kind, @name, @target, sqlc.narg(secret))
RETURNING id;

-- NotificationChannelListForAdmin lists the channels a signed-in user may
-- see, or the one with id: a tenant's user (scope_tenant_id) its tenant's
-- channels, a global user (NULL) every channel, the global ones first.
-- name: NotificationChannelListForAdmin :many
SELECT c.id, c.tenant_id, t.slug AS tenant_slug, c.kind, c.name, c.target, c.created_at, c.updated_at
FROM notification_channels c
LEFT JOIN tenants t ON t.id = c.tenant_id
WHERE (sqlc.narg(scope_tenant_id)::bigint IS NULL OR c.tenant_id = sqlc.narg(scope_tenant_id))
  AND (sqlc.narg(id)::bigint IS NULL OR c.id = sqlc.narg(id))
ORDER BY t.slug NULLS FIRST, c.name, c.id;

-- NotificationChannelUpdate renames a channel and changes where it sends,
-- within the signed-in user's scope; it returns no row outside it. Its
-- kind, tenant and secret stay.
-- name: NotificationChannelUpdate :one
UPDATE notification_channels SET name = @name, target = @target, updated_at = now()
WHERE id = @id AND (sqlc.narg(scope_tenant_id)::bigint IS NULL OR tenant_id = sqlc.narg(scope_tenant_id))
RETURNING id;

-- NotificationChannelDelete deletes a channel and the notifications it was
-- owed, within the signed-in user's scope; it returns no row outside it.
-- name: NotificationChannelDelete :one
DELETE FROM notification_channels
WHERE id = @id AND (sqlc.narg(scope_tenant_id)::bigint IS NULL OR tenant_id = sqlc.narg(scope_tenant_id))
RETURNING id;

-- NotificationChannelCountOfTenant counts a tenant's channels (NULL: the
-- global ones), under TenantLock for a tenant's, to bound them.
-- name: NotificationChannelCountOfTenant :one
SELECT count(*) FROM notification_channels WHERE tenant_id IS NOT DISTINCT FROM sqlc.narg(tenant_id)::bigint;
