-- name: UserInsert :one
INSERT INTO users (email, password_hash, role, tenant_id)
VALUES (@email, @password_hash, @role, @tenant_id)
RETURNING id;

-- name: UserGetByEmail :one
SELECT * FROM users WHERE lower(email) = lower(@email);

-- UserSetPassword gives a user of the scope (NULL: any) a new password and
-- ends every session the user has. It returns the user changed, as
-- UserDisable and UserEnable do: no row when the scope holds no user with
-- that id.
-- name: UserSetPassword :many
UPDATE users SET password_hash = @password_hash, session_epoch = session_epoch + 1
WHERE id = @id AND (sqlc.narg(scope_tenant_id)::bigint IS NULL OR tenant_id = sqlc.narg(scope_tenant_id))
RETURNING *;

-- UserDisable keeps a user of the scope from signing in, from now or since
-- an earlier disabling, and ends every session the user has.
-- name: UserDisable :many
UPDATE users SET disabled_at = coalesce(disabled_at, now()), session_epoch = session_epoch + 1
WHERE id = @id AND (sqlc.narg(scope_tenant_id)::bigint IS NULL OR tenant_id = sqlc.narg(scope_tenant_id))
RETURNING *;

-- UserEnable lets a disabled user of the scope sign in again. Sessions
-- ended by the disabling stay ended.
-- name: UserEnable :many
UPDATE users SET disabled_at = NULL
WHERE id = @id AND (sqlc.narg(scope_tenant_id)::bigint IS NULL OR tenant_id = sqlc.narg(scope_tenant_id))
RETURNING *;

-- UserGetForSession loads the signed-in user on every admin request, so a
-- changed role, a deleted or disabled user, or ended sessions take effect
-- at once. A disabled user is not found.
-- name: UserGetForSession :one
SELECT u.id, u.email, u.role, u.tenant_id, t.slug AS tenant_slug, u.session_epoch
FROM users u LEFT JOIN tenants t ON t.id = u.tenant_id
WHERE u.id = @id AND u.disabled_at IS NULL;

-- UserList lists the users a signed-in user may see: everyone for a global
-- user (NULL scope), the users of their own tenant otherwise.
-- name: UserList :many
SELECT u.id, u.email, u.role, t.slug AS tenant_slug, u.created_at, u.disabled_at
FROM users u LEFT JOIN tenants t ON t.id = u.tenant_id
WHERE sqlc.narg(scope_tenant_id)::bigint IS NULL OR u.tenant_id = sqlc.narg(scope_tenant_id)
ORDER BY lower(u.email);
