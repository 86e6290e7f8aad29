-- MessageInsert stores a message unless another message holds the same
-- fingerprint; then it returns no row and the caller decides about the holder.
-- The partial unique index, not application code, settles concurrent inserts.
-- name: MessageInsert :one
INSERT INTO messages (
    tenant_id, environment_id, message_type_id, docnum, payload, content_hash,
    computed_fingerprint, fingerprint, source_endpoint, integration_id, idempotency_key, remote_addr
) VALUES (
    @tenant_id, @environment_id, @message_type_id, @docnum, @payload, @content_hash,
    @computed_fingerprint, @fingerprint, @source_endpoint, @integration_id, @idempotency_key, @remote_addr
)
ON CONFLICT (tenant_id, environment_id, fingerprint) WHERE fingerprint IS NOT NULL DO NOTHING
RETURNING id, received_at;

-- MessageFingerprintHolder returns the message that currently holds a
-- fingerprint and whether it is still inside the window, judged by the
-- database clock at the time of the current transaction.
-- name: MessageFingerprintHolder :one
SELECT id, docnum, content_hash, received_at,
       received_at > now() - make_interval(hours => @window_hours::int) AS within_window
FROM messages
WHERE tenant_id = @tenant_id AND environment_id = @environment_id AND fingerprint = @fingerprint;

-- MessageReleaseFingerprint hands a fingerprint back after its window passed,
-- so that a newer message can claim it. It changes nothing when another
-- transaction released it first.
-- name: MessageReleaseFingerprint :execrows
UPDATE messages SET fingerprint = NULL
WHERE tenant_id = @tenant_id AND id = @id AND fingerprint = @fingerprint;

-- name: MessageGet :one
SELECT * FROM messages WHERE tenant_id = @tenant_id AND id = @id;

-- name: MessageCount :one
SELECT count(*) FROM messages WHERE tenant_id = @tenant_id AND environment_id = @environment_id;
