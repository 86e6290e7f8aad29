-- name: UserInsert :one
INSERT INTO users (email, password_hash, role, tenant_id)
VALUES (@email, @password_hash, @role, @tenant_id)
RETURNING id;

-- name: UserGetByEmail :one
SELECT * FROM users WHERE lower(email) = lower(@email);

-- name: UserSetPassword :exec
UPDATE users SET password_hash = @password_hash WHERE id = @id;
