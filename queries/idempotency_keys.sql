-- IdempotencyKeyClaim takes a key for this request: a new key, or one whose
-- retention has passed. It returns no row while another request holds the
-- key; a concurrent request waits here until the holder's transaction ends.
-- name: IdempotencyKeyClaim :execrows
INSERT INTO idempotency_keys (tenant_id, environment_id, scope, key, request_hash, expires_at)
VALUES (@tenant_id, @environment_id, @scope, @key, @request_hash,
        now() + make_interval(secs => @ttl_seconds::float8))
ON CONFLICT (tenant_id, environment_id, scope, key) DO UPDATE
SET request_hash = excluded.request_hash,
    message_id = NULL,
    response_body = NULL,
    created_at = now(),
    expires_at = excluded.expires_at
WHERE idempotency_keys.expires_at <= now();

-- name: IdempotencyKeyGet :one
SELECT * FROM idempotency_keys
WHERE tenant_id = @tenant_id AND environment_id = @environment_id AND scope = @scope AND key = @key;

-- name: IdempotencyKeyComplete :exec
UPDATE idempotency_keys
SET message_id = @message_id, response_body = @response_body
WHERE tenant_id = @tenant_id AND environment_id = @environment_id AND scope = @scope AND key = @key;

-- IdempotencyKeyDeleteExpired removes one batch of keys past their
-- retention. SKIP LOCKED passes over a key that a request is taking over
-- right now, so the sweep never makes ingest wait.
-- name: IdempotencyKeyDeleteExpired :execrows
DELETE FROM idempotency_keys
WHERE (tenant_id, environment_id, scope, key) IN (
    SELECT k.tenant_id, k.environment_id, k.scope, k.key
    FROM idempotency_keys k
    WHERE k.expires_at <= now()
    ORDER BY k.expires_at
    LIMIT @batch_size
    FOR UPDATE SKIP LOCKED
);
