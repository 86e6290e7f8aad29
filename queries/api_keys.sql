-- name: APIKeyInsert :one
INSERT INTO api_keys (tenant_id, environment_id, key_hash, key_prefix, name)
VALUES (@tenant_id, @environment_id, @key_hash, @key_prefix, @name)
RETURNING id;

-- APIKeyGetByHash finds a live key: one not revoked, or revoked at a time
-- still to come (a rotated key during its grace period). The lookup is by
-- SHA-256 of the presented key, so response timing reveals nothing about a
-- stored key's bytes. It marks the key used (see APIKeyGetWithMessageTypes).
-- name: APIKeyGetByHash :one
WITH used AS (
    UPDATE api_keys u SET last_used_at = now()
    WHERE u.key_hash = @key_hash AND (u.revoked_at IS NULL OR u.revoked_at > now())
      AND (u.last_used_at IS NULL OR u.last_used_at < now() - interval '1 minute')
)
SELECT k.id, k.tenant_id, k.environment_id FROM api_keys k
WHERE k.key_hash = @key_hash AND (k.revoked_at IS NULL OR k.revoked_at > now());

-- APIKeyGetWithMessageTypes finds a live key and, in the same round trip,
-- every message type of its tenant, one row each (one row with NULL type
-- columns when the tenant has none). receive-message authenticates before
-- it reads the body that names the type, so fetching a tenant's few types
-- with its key saves a round trip; package sender keeps the answer for a
-- few seconds (API_KEY_CACHE_TTL), never past the key's revoked_at.
-- The same statement marks the key used, so that the keys page tells a
-- key in use from a forgotten one: last_used_at is written only when it
-- is a minute old or more, so that a key's requests do not each write its
-- row (and wait on each other's lock); otherwise the update is a probe of
-- the key_hash index in the lookup's own round trip. With the cache, the
-- lookup runs once per key and process every API_KEY_CACHE_TTL, so
-- last_used_at lags by up to a minute plus that.
-- name: APIKeyGetWithMessageTypes :many
WITH used AS (
    UPDATE api_keys u SET last_used_at = now()
    WHERE u.key_hash = @key_hash AND (u.revoked_at IS NULL OR u.revoked_at > now())
      AND (u.last_used_at IS NULL OR u.last_used_at < now() - interval '1 minute')
)
SELECT k.id, k.tenant_id, k.environment_id, k.revoked_at,
       mt.id AS message_type_id, mt.code AS message_type_code,
       mt.duplicate_key_fields, mt.duplicate_window_hours
FROM api_keys k
LEFT JOIN message_types mt ON mt.tenant_id = k.tenant_id
WHERE k.key_hash = @key_hash AND (k.revoked_at IS NULL OR k.revoked_at > now());

-- APIKeyList lists the keys a signed-in user may see (NULL scope: all),
-- revoked ones included, without anything that would authenticate.
-- name: APIKeyList :many
SELECT k.id, k.name, t.slug AS tenant_slug, e.slug AS environment_slug, k.key_prefix, k.created_at, k.revoked_at,
       k.last_used_at
FROM api_keys k
JOIN tenants t ON t.id = k.tenant_id
JOIN environments e ON e.tenant_id = k.tenant_id AND e.id = k.environment_id
WHERE sqlc.narg(scope_tenant_id)::bigint IS NULL OR k.tenant_id = sqlc.narg(scope_tenant_id)
ORDER BY t.slug, e.slug, k.id DESC;

-- APIKeyRevoke makes a key of the scope stop working at @revoke_at, or keeps
-- an earlier revocation. It returns the key (no row when the scope holds no
-- key with that id) and its revocation time before the change.
-- name: APIKeyRevoke :many
UPDATE api_keys k SET revoked_at = LEAST(coalesce(k.revoked_at, 'infinity'), @revoke_at::timestamptz)
FROM api_keys before
WHERE k.id = @id AND before.id = k.id
  AND (sqlc.narg(scope_tenant_id)::bigint IS NULL OR k.tenant_id = sqlc.narg(scope_tenant_id))
RETURNING k.tenant_id, k.environment_id, k.key_prefix, k.name, before.revoked_at AS revoked_before;

-- APIKeyListExpiring lists the keys whose rotation grace ends after now
-- and at or before until (api_keys_revoked), for the rule secret.expiring.
-- name: APIKeyListExpiring :many
SELECT k.id, k.tenant_id, k.key_prefix, k.revoked_at::timestamptz AS ends_at,
       t.slug AS tenant_slug, e.slug AS environment_slug
FROM api_keys k
JOIN tenants t ON t.id = k.tenant_id
JOIN environments e ON e.tenant_id = k.tenant_id AND e.id = k.environment_id
WHERE k.revoked_at > @now::timestamptz AND k.revoked_at <= @until::timestamptz
ORDER BY k.id;
