-- name: MessageTypeInsert :one
INSERT INTO message_types (tenant_id, code, duplicate_key_fields, duplicate_window_hours)
VALUES (@tenant_id, @code, @duplicate_key_fields, @duplicate_window_hours)
RETURNING *;

-- name: MessageTypeGetByCode :one
SELECT * FROM message_types WHERE tenant_id = @tenant_id AND code = @code;

-- name: MessageTypeGetByID :one
SELECT * FROM message_types WHERE tenant_id = @tenant_id AND id = @id;

-- MessageTypeListForAdmin lists the message types a signed-in user may see
-- (scope_tenant_id NULL: a global user); their recent traffic comes from
-- the dashboard's rollups (internal/typeeditor).
-- name: MessageTypeListForAdmin :many
SELECT sqlc.embed(mt), t.slug AS tenant_slug
FROM message_types mt
JOIN tenants t ON t.id = mt.tenant_id
WHERE sqlc.narg(scope_tenant_id)::bigint IS NULL OR mt.tenant_id = sqlc.narg(scope_tenant_id)
ORDER BY t.slug, mt.code;

-- MessageTypeGetForAdmin loads a message type within the signed-in user's
-- scope; another tenant's type is not found.
-- name: MessageTypeGetForAdmin :one
SELECT sqlc.embed(mt), t.slug AS tenant_slug
FROM message_types mt
JOIN tenants t ON t.id = mt.tenant_id
WHERE mt.id = @id AND (sqlc.narg(scope_tenant_id)::bigint IS NULL OR mt.tenant_id = sqlc.narg(scope_tenant_id));

-- MessageTypeUpdate saves an editor's change if the type is still at the
-- version the editor was opened at, and bumps the version; no row means
-- someone else saved first. Every change goes through here, so a version
-- names one set of settings.
-- name: MessageTypeUpdate :one
UPDATE message_types
SET duplicate_key_fields = @duplicate_key_fields, duplicate_window_hours = @duplicate_window_hours,
    version = version + 1, updated_at = now()
WHERE tenant_id = @tenant_id AND id = @id AND version = @version
RETURNING *;

-- MessageTypeListKeyFields lists every type's key paths, for the check
-- serve makes at start of paths stored before the key-path grammar.
-- name: MessageTypeListKeyFields :many
SELECT mt.id, mt.code, mt.duplicate_key_fields, t.slug AS tenant_slug
FROM message_types mt
JOIN tenants t ON t.id = mt.tenant_id
ORDER BY t.slug, mt.code;

-- MessageTypeLongestWindows gives, for each tenant within the scope (NULL:
-- a global user), its message type with the longest duplicate window (NULL
-- meaning default_window_hours; the first code among equals), or '' and 0
-- when the tenant has none: what a tenant's message retention is raised to.
-- name: MessageTypeLongestWindows :many
SELECT t.id AS tenant_id, t.slug AS tenant_slug, coalesce(w.code, '')::text AS code,
       coalesce(w.window_hours, 0)::int AS window_hours
FROM tenants t
LEFT JOIN LATERAL (
    SELECT mt.code, coalesce(mt.duplicate_window_hours, @default_window_hours::int) AS window_hours
    FROM message_types mt
    WHERE mt.tenant_id = t.id
    ORDER BY 2 DESC, mt.code
    LIMIT 1
) w ON true
WHERE (sqlc.narg(scope_tenant_id)::bigint IS NULL OR t.id = sqlc.narg(scope_tenant_id))
ORDER BY t.slug;

-- MessageTypeCountOfTenant counts a tenant's message types, under
-- TenantLock to bound them.
-- name: MessageTypeCountOfTenant :one
SELECT count(*) FROM message_types WHERE tenant_id = @tenant_id;
