-- name: TenantInsert :one
INSERT INTO tenants (slug, name) VALUES (@slug, @name) RETURNING *;

-- name: TenantGetBySlug :one
SELECT * FROM tenants WHERE slug = @slug;

-- TenantList lists the tenants a signed-in user may see (NULL scope: all).
-- name: TenantList :many
SELECT * FROM tenants
WHERE sqlc.narg(scope_tenant_id)::bigint IS NULL OR id = sqlc.narg(scope_tenant_id)
ORDER BY slug;

-- TenantLock holds a tenant's row until the transaction ends, so that two
-- creations at once cannot both pass a bound on what a tenant may have.
-- NO KEY UPDATE leaves the row free for the KEY SHARE locks that writes
-- referring to the tenant take. The count must be a statement of its own,
-- after this one: under READ COMMITTED a statement sees what committed
-- before it began, so a count in the locking statement would miss the row
-- of the transaction it waited for.
-- name: TenantLock :exec
SELECT id FROM tenants WHERE id = @id FOR NO KEY UPDATE;
