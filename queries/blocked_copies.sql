-- BlockedCopyGet loads a copy (written by MessageStoreOrBlock, in the
-- statement that blocked it) with its original's payload, the names an
-- admin reads, the fingerprint it matched on, and who released it, if
-- anyone did. Like every query here that an admin page runs, it takes the
-- signed-in user's tenant as scope_tenant_id (NULL for a global user), so
-- that a copy outside the scope is not found.
-- name: BlockedCopyGet :one
SELECT c.id, c.docnum, c.payload, c.content_hash, c.sender, c.received_at,
       c.content_type, c.received_bytes, c.packet_position, c.packet_size,
       c.original_message_id, o.docnum AS original_docnum, o.payload AS original_payload,
       o.received_at AS original_received_at, e.match_key AS fingerprint,
       c.released_message_id, c.released_at, c.release_reason, u.email AS released_by_email,
       t.slug AS tenant_slug, env.slug AS environment_slug, mt.code AS message_type_code
FROM blocked_copies c
JOIN messages o ON o.tenant_id = c.tenant_id AND o.id = c.original_message_id
JOIN audit_events e ON e.id = c.audit_event_id
JOIN tenants t ON t.id = c.tenant_id
JOIN environments env ON env.id = c.environment_id
JOIN message_types mt ON mt.id = c.message_type_id
LEFT JOIN users u ON u.id = c.released_by
WHERE c.id = @id AND (sqlc.narg(scope_tenant_id)::bigint IS NULL OR c.tenant_id = sqlc.narg(scope_tenant_id));

-- BlockedCopyLockForRelease locks a copy for the transaction that releases
-- it. A concurrent release of the same copy waits here until the first one
-- ends, and then reads the released_message_id it committed.
-- name: BlockedCopyLockForRelease :one
SELECT c.id, c.tenant_id, c.environment_id, c.message_type_id, c.original_message_id, c.released_message_id,
       e.match_key AS fingerprint
FROM blocked_copies c
JOIN audit_events e ON e.id = c.audit_event_id
WHERE c.id = @id AND (sqlc.narg(scope_tenant_id)::bigint IS NULL OR c.tenant_id = sqlc.narg(scope_tenant_id))
FOR UPDATE OF c;

-- BlockedCopyInsertMessage stores a copy as a message of its own, with the
-- time and source it arrived with. It computes the fingerprint the copy
-- matched on but does not claim it (fingerprint stays NULL): the original
-- keeps matching retransmissions, undisturbed. The payload, the bytes of a
-- copy that arrived as IDoc-XML and the business key values the copy was
-- blocked on are copied inside the database, never read into the application.
-- name: BlockedCopyInsertMessage :one
WITH inserted AS (
    INSERT INTO messages (
        tenant_id, environment_id, message_type_id, docnum, payload, content_hash,
        computed_fingerprint, source_endpoint, integration_id, remote_addr, received_at,
        content_type, received_bytes, packet_position, packet_size
    )
    SELECT c.tenant_id, c.environment_id, c.message_type_id, c.docnum, c.payload, c.content_hash,
           e.match_key, c.sender->>'endpoint', (c.sender->>'integration_id')::uuid,
           coalesce(c.sender->>'remote_addr', ''), c.received_at,
           c.content_type, c.received_bytes, c.packet_position, c.packet_size
    FROM blocked_copies c
    JOIN audit_events e ON e.id = c.audit_event_id
    WHERE c.id = @id
    RETURNING id, tenant_id
), keys AS (
    INSERT INTO message_keys (tenant_id, message_id, value)
    SELECT inserted.tenant_id, inserted.id, v
    FROM inserted, blocked_copies c, unnest(c.key_values) v
    WHERE c.id = @id
)
SELECT id FROM inserted;

-- BlockedCopyMarkReleased records the release. It changes no row when the
-- copy was released already, so a copy is released at most once even
-- without the lock that BlockedCopyLockForRelease takes.
-- name: BlockedCopyMarkReleased :execrows
UPDATE blocked_copies
SET released_message_id = @released_message_id::bigint, released_at = now(), released_by = @released_by::bigint,
    release_reason = @release_reason::text
WHERE id = @id AND released_message_id IS NULL;

-- BlockedCopiesOfEvents finds the copies that some audit events kept, for
-- the rows of the audit log.
-- name: BlockedCopiesOfEvents :many
SELECT c.audit_event_id, c.id, c.released_message_id
FROM blocked_copies c
WHERE c.audit_event_id = ANY(@audit_event_ids::bigint[])
  AND (sqlc.narg(scope_tenant_id)::bigint IS NULL OR c.tenant_id = sqlc.narg(scope_tenant_id));

-- BlockedCopyOfReleasedMessage finds the copy a message was released from.
-- name: BlockedCopyOfReleasedMessage :one
SELECT c.id, c.original_message_id, c.released_at, c.release_reason, u.email AS released_by_email
FROM blocked_copies c
LEFT JOIN users u ON u.id = c.released_by
WHERE c.released_message_id = @message_id::bigint
  AND (sqlc.narg(scope_tenant_id)::bigint IS NULL OR c.tenant_id = sqlc.narg(scope_tenant_id));

-- BlockedCopyCountsOfOriginal counts the changed copies blocked against a
-- message and how many of them were released, along the
-- blocked_copies_original index.
-- name: BlockedCopyCountsOfOriginal :one
SELECT count(*) AS kept, count(c.released_message_id) AS released
FROM blocked_copies c
WHERE c.original_message_id = @original_message_id
  AND (sqlc.narg(scope_tenant_id)::bigint IS NULL OR c.tenant_id = sqlc.narg(scope_tenant_id));
