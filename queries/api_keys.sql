-- name: APIKeyInsert :one
INSERT INTO api_keys (tenant_id, environment_id, key_hash, key_prefix)
VALUES (@tenant_id, @environment_id, @key_hash, @key_prefix)
RETURNING id;

-- APIKeyGetByHash finds a live key. The lookup is by SHA-256 of the presented
-- key, so response timing reveals nothing about a stored key's bytes.
-- name: APIKeyGetByHash :one
SELECT id, tenant_id, environment_id FROM api_keys
WHERE key_hash = @key_hash AND revoked_at IS NULL;
