-- InterchangeClaim takes an interchange's control number for this
-- request: a new one, or one whose row is older than the window. It
-- returns no row while the control number is held: a concurrent request
-- waits here until the holder's transaction ends, and then finds its row
-- with InterchangeFind. The caller completes the row with the answer in the
-- same transaction. With the row it returns the control number of the
-- acknowledgment edihub writes for the interchange (see
-- InterchangeAcknowledgmentNumber), taken in the same round trip.
-- name: InterchangeClaim :one
INSERT INTO interchanges (tenant_id, environment_id, standard, sender, receiver, control_number, content_hash)
VALUES (@tenant_id, @environment_id, @standard, @sender, @receiver, @control_number, @content_hash)
ON CONFLICT (tenant_id, environment_id, standard, sender, receiver, control_number) DO UPDATE
SET content_hash = excluded.content_hash,
    response_body = NULL,
    acknowledgment = NULL,
    received_at = now()
WHERE interchanges.received_at <= now() - make_interval(secs => @window_seconds::float8)
RETURNING id, nextval('interchange_acknowledgment_numbers')::bigint AS acknowledgment_number;

-- InterchangeFind is the interchange that holds a control number.
-- name: InterchangeFind :one
SELECT id, content_hash, response_body, acknowledgment, received_at
FROM interchanges
WHERE tenant_id = @tenant_id AND environment_id = @environment_id AND standard = @standard
  AND sender = @sender AND receiver = @receiver AND control_number = @control_number;

-- InterchangeComplete keeps the answer an interchange's messages got and
-- the acknowledgment sent for it.
-- name: InterchangeComplete :exec
UPDATE interchanges SET response_body = @response_body, acknowledgment = @acknowledgment WHERE id = @id;

-- InterchangeAcknowledgmentNumber is the control number of the next
-- acknowledgment interchange edihub writes (1 to 999999999, then 1 again):
-- here for the one that rejects an interchange, as InterchangeClaim takes
-- the one that accepts it.
-- name: InterchangeAcknowledgmentNumber :one
SELECT nextval('interchange_acknowledgment_numbers')::bigint;

-- InterchangeBlockedEvents writes one message.duplicate_blocked audit
-- event per message of a repeated interchange, against the message its
-- first answer names, in order. The messages of the repeat are given as
-- parallel arrays, as for IdempotencyKeyReplay: each one's event details
-- without "original" and "content", which are added here (see
-- auditevent.BlockedDetails), its content hash and its message type.
-- Each original is looked up by its primary key alone and its tenant
-- checked after, as in IdempotencyKeyReplay: OFFSET 0 keeps the lookup a
-- subquery run once per answer. Joined directly, a generic plan made while
-- messages was small read and hashed every message of the tenant for each
-- repeat (see "Plans" in docs/performance.md).
-- name: InterchangeBlockedEvents :execrows
INSERT INTO audit_events (tenant_id, environment_id, message_type_id, message_id, action, actor, match_key, details)
SELECT @tenant_id, @environment_id, (@message_type_ids::bigint[])[a.position], m.id, @action, @actor, @match_key,
       (@details::jsonb[])[a.position] || jsonb_build_object(
           'original', jsonb_build_object('id', m.id, 'docnum', m.docnum),
           'content', CASE WHEN m.content_hash = (@content_hashes::bytea[])[a.position] THEN 'identical' ELSE 'changed' END)
FROM interchanges i
CROSS JOIN LATERAL json_array_elements(i.response_body->'messages') WITH ORDINALITY AS a (answer, position)
CROSS JOIN LATERAL (
    SELECT m.id, m.tenant_id, m.docnum, m.content_hash FROM messages m WHERE m.id = (a.answer->>'id')::bigint OFFSET 0
) m
WHERE i.id = @id AND m.tenant_id = @tenant_id
ORDER BY a.position;

-- InterchangeDeleteExpired deletes up to batch_size interchanges received
-- more than window_seconds ago, with their answers and acknowledgments: a
-- repeat after the window would take the row over anyway
-- (InterchangeClaim). SKIP LOCKED passes over one a request is claiming
-- right now. The partners' numbers and gaps stay.
-- name: InterchangeDeleteExpired :execrows
DELETE FROM interchanges
WHERE id IN (
    SELECT i.id FROM interchanges i
    WHERE i.received_at <= now() - make_interval(secs => @window_seconds::float8)
    ORDER BY i.received_at
    LIMIT @batch_size::int
    FOR UPDATE SKIP LOCKED
);
