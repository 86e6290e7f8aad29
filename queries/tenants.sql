-- name: TenantInsert :one
INSERT INTO tenants (slug, name) VALUES (@slug, @name) RETURNING *;

-- name: TenantGetBySlug :one
SELECT * FROM tenants WHERE slug = @slug;

-- TenantList lists the tenants a signed-in user may see (NULL scope: all).
-- name: TenantList :many
SELECT * FROM tenants
WHERE sqlc.narg(scope_tenant_id)::bigint IS NULL OR id = sqlc.narg(scope_tenant_id)
ORDER BY slug;
