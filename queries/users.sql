-- name: UserInsert :one
INSERT INTO users (email, password_hash, role, tenant_id)
VALUES (@email, @password_hash, @role, @tenant_id)
RETURNING id;

-- name: UserGetByEmail :one
SELECT * FROM users WHERE lower(email) = lower(@email);

-- name: UserSetPassword :exec
UPDATE users SET password_hash = @password_hash WHERE id = @id;

-- UserGetForSession loads the signed-in user on every admin request, so a
-- changed role or a deleted user takes effect at once.
-- name: UserGetForSession :one
SELECT u.id, u.email, u.role, u.tenant_id, t.slug AS tenant_slug
FROM users u LEFT JOIN tenants t ON t.id = u.tenant_id
WHERE u.id = @id;

-- UserList lists the users a signed-in user may see: everyone for a global
-- user (NULL scope), the users of their own tenant otherwise.
-- name: UserList :many
SELECT u.id, u.email, u.role, t.slug AS tenant_slug, u.created_at
FROM users u LEFT JOIN tenants t ON t.id = u.tenant_id
WHERE sqlc.narg(scope_tenant_id)::bigint IS NULL OR u.tenant_id = sqlc.narg(scope_tenant_id)
ORDER BY lower(u.email);
