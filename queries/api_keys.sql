-- name: APIKeyInsert :one
INSERT INTO api_keys (tenant_id, environment_id, key_hash, key_prefix)
VALUES (@tenant_id, @environment_id, @key_hash, @key_prefix)
RETURNING id;

-- APIKeyGetByHash finds a live key. The lookup is by SHA-256 of the presented
-- key, so response timing reveals nothing about a stored key's bytes.
-- name: APIKeyGetByHash :one
SELECT id, tenant_id, environment_id FROM api_keys
WHERE key_hash = @key_hash AND revoked_at IS NULL;

-- APIKeyGetWithMessageTypes finds a live key and, in the same round trip,
-- every message type of its tenant, one row each (one row with NULL type
-- columns when the tenant has none). receive-message authenticates before
-- it reads the body that names the type, and must read the type afresh for
-- every message (a changed window applies at once), so fetching a tenant's
-- few types with its key saves a round trip per message.
-- name: APIKeyGetWithMessageTypes :many
SELECT k.id, k.tenant_id, k.environment_id,
       mt.id AS message_type_id, mt.code AS message_type_code,
       mt.duplicate_key_fields, mt.duplicate_window_hours
FROM api_keys k
LEFT JOIN message_types mt ON mt.tenant_id = k.tenant_id
WHERE k.key_hash = @key_hash AND k.revoked_at IS NULL;
