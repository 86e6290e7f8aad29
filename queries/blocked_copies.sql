-- BlockedCopyGet loads a copy (written by MessageStoreOrBlock, in the
-- statement that blocked it) with its original's payload, the names an
-- admin reads, the fingerprint it matched on, and who released it, if
-- anyone did. Like every query here that an admin page runs, it takes the
-- signed-in user's tenant as scope_tenant_id (NULL for a global user), so
-- that a copy outside the scope is not found. A copy names its event by
-- (received_at, audit_event_id), the event's primary key, which finds it
-- in one partition of audit_events. Of the bytes the copy was received as
-- (when not JSON) it loads the first shown_bytes, what the page shows, and
-- their size; BlockedCopyReceivedPart downloads them. A copy or original
-- stored without its view (migration 040) has what rebuilds it, as
-- MessageGetForAdmin loads it.
-- name: BlockedCopyGet :one
SELECT c.id, c.docnum, c.payload, c.content_hash, c.sender, c.received_at, c.copies, c.last_seen_at,
       (CASE WHEN c.payload IS NULL THEN c.received_bytes END)::bytea AS view_bytes, c.edi_frame,
       c.content_type, substr(c.received_bytes, 1, @shown_bytes::int) AS received_head,
       COALESCE(octet_length(c.received_bytes), 0)::int AS received_size, c.packet_position, c.packet_size,
       c.original_message_id, o.docnum AS original_docnum, o.payload AS original_payload,
       o.content_type AS original_content_type,
       (CASE WHEN o.payload IS NULL THEN o.received_bytes END)::bytea AS original_view_bytes, o.edi_frame AS original_edi_frame,
       o.received_at AS original_received_at, e.match_key AS fingerprint,
       c.released_message_id, c.released_at, c.release_reason, u.email AS released_by_email,
       c.dismissed_at, c.dismiss_reason, du.email AS dismissed_by_email,
       t.slug AS tenant_slug, env.slug AS environment_slug, mt.code AS message_type_code
FROM blocked_copies c
JOIN messages o ON o.tenant_id = c.tenant_id AND o.id = c.original_message_id
JOIN audit_events e ON e.created_at = c.received_at AND e.id = c.audit_event_id
JOIN tenants t ON t.id = c.tenant_id
JOIN environments env ON env.id = c.environment_id
JOIN message_types mt ON mt.id = c.message_type_id
LEFT JOIN users u ON u.id = c.released_by
LEFT JOIN users du ON du.id = c.dismissed_by
WHERE c.id = @id AND (sqlc.narg(scope_tenant_id)::bigint IS NULL OR c.tenant_id = sqlc.narg(scope_tenant_id));

-- BlockedCopyReceivedPart is MessageReceivedPart for a blocked copy.
-- name: BlockedCopyReceivedPart :one
SELECT c.content_type,
       COALESCE(octet_length(c.received_bytes), octet_length(c.payload::text))::bigint AS size,
       substr(COALESCE(c.received_bytes, convert_to(c.payload::text, 'UTF8')), sqlc.arg(part_start)::int, sqlc.arg(part_length)::int)::bytea AS part
FROM blocked_copies c
WHERE c.id = @id AND (sqlc.narg(scope_tenant_id)::bigint IS NULL OR c.tenant_id = sqlc.narg(scope_tenant_id));

-- BlockedCopyLockForRelease locks a copy for the transaction that releases
-- or dismisses it. A concurrent decision on the same copy waits here until
-- the first one ends, and then reads the decision it committed.
-- name: BlockedCopyLockForRelease :one
SELECT c.id, c.tenant_id, c.environment_id, c.message_type_id, c.original_message_id, c.released_message_id,
       c.dismissed_at, e.match_key AS fingerprint
FROM blocked_copies c
JOIN audit_events e ON e.created_at = c.received_at AND e.id = c.audit_event_id
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
        content_type, received_bytes, edi_frame, packet_position, packet_size, first_key_value
    )
    SELECT c.tenant_id, c.environment_id, c.message_type_id, c.docnum, c.payload, c.content_hash,
           e.match_key, c.sender->>'endpoint', (c.sender->>'integration_id')::uuid,
           coalesce(c.sender->>'remote_addr', ''), c.received_at,
           c.content_type, c.received_bytes, c.edi_frame, c.packet_position, c.packet_size, c.key_values[1]
    FROM blocked_copies c
    JOIN audit_events e ON e.created_at = c.received_at AND e.id = c.audit_event_id
    WHERE c.id = @id
    RETURNING id, tenant_id
), keys AS (
    INSERT INTO message_keys (tenant_id, message_id, value)
    SELECT inserted.tenant_id, inserted.id, v
    FROM inserted, blocked_copies c, unnest(c.key_values[2:]) v
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
WHERE id = @id AND released_message_id IS NULL AND dismissed_at IS NULL;

-- BlockedCopyMarkDismissed records that an admin reviewed a copy and left it
-- a blocked duplicate. Like a release, it changes only an undecided copy.
-- name: BlockedCopyMarkDismissed :execrows
UPDATE blocked_copies
SET dismissed_at = now(), dismissed_by = @dismissed_by::bigint, dismiss_reason = @dismiss_reason::text
WHERE id = @id AND released_message_id IS NULL AND dismissed_at IS NULL;

-- BlockedCopyReviewList is a page of the review queue: kept copies with
-- changed content, newest first, keyset paginated on (received_at, id),
-- with their decision if there is one. Every filter is optional; the scope
-- applies whatever they say. Run it with custom plans (see internal/auditlog)
-- so that the planner walks blocked_copies_tenant_review or
-- blocked_copies_review, whichever fits. The page is taken from
-- blocked_copies alone and then joined: with the joins above the LIMIT, a
-- planner that guessed a few rows (on statistics from when the table was
-- small) fetched every copy of the state, joined each to its original and
-- sorted them (1.3 s for 29,000 dismissed copies).
-- name: BlockedCopyReviewList :many
SELECT c.id, c.docnum, c.received_at, c.copies, c.last_seen_at, c.review_state, c.original_message_id, o.docnum AS original_docnum,
       c.released_message_id, coalesce(c.released_at, c.dismissed_at) AS decided_at,
       coalesce(c.release_reason, c.dismiss_reason) AS decision_reason, u.email AS decided_by_email,
       t.slug AS tenant_slug, env.slug AS environment_slug, mt.code AS message_type_code
FROM (
    SELECT c.* FROM blocked_copies c
    WHERE (sqlc.narg(scope_tenant_id)::bigint IS NULL OR c.tenant_id = sqlc.narg(scope_tenant_id))
      AND (sqlc.narg(tenant_id)::bigint IS NULL OR c.tenant_id = sqlc.narg(tenant_id))
      AND (sqlc.narg(review_state)::text IS NULL OR c.review_state = sqlc.narg(review_state))
      AND (sqlc.narg(environment_id)::bigint IS NULL OR c.environment_id = sqlc.narg(environment_id))
      AND (sqlc.narg(message_type_id)::bigint IS NULL OR c.message_type_id = sqlc.narg(message_type_id))
      AND (sqlc.narg(since)::timestamptz IS NULL OR c.received_at >= sqlc.narg(since))
      AND (sqlc.narg(until)::timestamptz IS NULL OR c.received_at < sqlc.narg(until))
      AND (sqlc.narg(before_time)::timestamptz IS NULL
           OR (c.received_at, c.id) < (sqlc.narg(before_time)::timestamptz, sqlc.narg(before_id)::bigint))
    ORDER BY c.received_at DESC, c.id DESC
    LIMIT @page_size
) c
JOIN messages o ON o.tenant_id = c.tenant_id AND o.id = c.original_message_id
JOIN tenants t ON t.id = c.tenant_id
JOIN environments env ON env.id = c.environment_id
JOIN message_types mt ON mt.id = c.message_type_id
LEFT JOIN users u ON u.id = coalesce(c.released_by, c.dismissed_by)
ORDER BY c.received_at DESC, c.id DESC;

-- BlockedCopyOpenCount counts the copies awaiting a decision within the
-- scope, for the navigation, but no more than max_count of them: the
-- count reads at most that many entries of a review index, however long
-- the queue has grown.
-- name: BlockedCopyOpenCount :one
SELECT count(*) FROM (
    SELECT FROM blocked_copies c
    WHERE c.review_state = 'open'
      AND (sqlc.narg(scope_tenant_id)::bigint IS NULL OR c.tenant_id = sqlc.narg(scope_tenant_id))
    LIMIT @max_count
) open_copies;

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

-- BlockedCopyDeleteExpired deletes up to batch_size blocked copies received
-- more than period_seconds ago, whatever their review state: each state's
-- oldest rows are a range of blocked_copies_review. SKIP LOCKED passes over
-- a copy an admin is releasing or dismissing right now; it goes next round.
-- name: BlockedCopyDeleteExpired :execrows
DELETE FROM blocked_copies
WHERE id IN (
    SELECT b.id FROM blocked_copies b
    WHERE b.review_state IN ('open', 'released', 'dismissed')
      AND b.received_at < now() - make_interval(secs => @period_seconds::float8)
    LIMIT @batch_size::int
    FOR UPDATE SKIP LOCKED
);
