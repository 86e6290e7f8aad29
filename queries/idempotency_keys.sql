-- IdempotencyKeyClaimAndStore takes a key for this request (a new key, or
-- one whose retention has passed) and stores the message under it, in one
-- statement (with its business key values, see MessageInsert). It returns
-- no row while another request holds the key; a
-- concurrent request waits here until the holder's transaction ends. The
-- caller completes the key with the answer in the same transaction.
-- name: IdempotencyKeyClaimAndStore :one
WITH claim AS (
    INSERT INTO idempotency_keys (tenant_id, environment_id, scope, key, request_hash, expires_at)
    VALUES (@tenant_id, @environment_id, @scope, @key, @request_hash,
            now() + make_interval(secs => @ttl_seconds::float8))
    ON CONFLICT (tenant_id, environment_id, scope, key) DO UPDATE
    SET request_hash = excluded.request_hash,
        message_id = NULL,
        response_body = NULL,
        created_at = now(),
        expires_at = excluded.expires_at
    WHERE idempotency_keys.expires_at <= now()
    RETURNING 1
), stored AS (
    INSERT INTO messages (
        tenant_id, environment_id, message_type_id, docnum, payload, content_hash,
        computed_fingerprint, source_endpoint, integration_id, idempotency_key, remote_addr,
        content_type, received_bytes, edi_frame, packet_position, packet_size, first_key_value
    )
    SELECT @tenant_id, @environment_id, @message_type_id, @docnum, @payload, @content_hash,
           @computed_fingerprint, @source_endpoint, @integration_id, @key, @remote_addr,
           @content_type, @received_bytes, @edi_frame, @packet_position, @packet_size, (@key_values::text[])[1]
    FROM claim
    RETURNING id, received_at
), keys AS (
    INSERT INTO message_keys (tenant_id, message_id, value)
    SELECT @tenant_id, stored.id, v FROM stored, unnest((@key_values::text[])[2:]) v
)
SELECT id, received_at FROM stored;

-- IdempotencyKeyReplay answers a request whose key is already taken, in one
-- statement and so in one round trip and one transaction: it returns the
-- live, completed key with the first answer and whether this request is the
-- same as the first one, and only when it is, writes one
-- message.duplicate_blocked audit event per message of the request against
-- the message its first sending stored. No row means no live, completed key:
-- a first request, an expired key, or one whose first request has not
-- committed yet (the caller then claims it and waits there).
-- The request's messages are given in order as parallel arrays: each one's
-- event details without "original" and "content", which are added here (see
-- auditevent.BlockedDetails), its content hash and its message type. A
-- request of one message has its original in the key's message_id; a packet
-- or a batch stored under one key has its originals in its first answer,
-- {"messages": [...]}, in the same order.
-- name: IdempotencyKeyReplay :one
WITH k AS (
    SELECT ik.message_id, ik.request_hash = @request_hash AS same_request, ik.response_body
    FROM idempotency_keys ik
    WHERE ik.tenant_id = @tenant_id AND ik.environment_id = @environment_id AND ik.scope = @scope
      AND ik.key = @key AND ik.expires_at > now() AND ik.response_body IS NOT NULL
), answered AS (
    SELECT a.position::int AS position,
           CASE WHEN json_typeof(k.response_body->'messages') = 'array'
                THEN (a.answer->>'id')::bigint ELSE k.message_id END AS original_id
    FROM k
    CROSS JOIN LATERAL json_array_elements(CASE WHEN json_typeof(k.response_body->'messages') = 'array'
                                                THEN k.response_body->'messages'
                                                ELSE json_build_array(k.response_body) END)
        WITH ORDINALITY AS a (answer, position)
    WHERE k.same_request
), original AS (
    -- Each original is looked up by its primary key alone, and its tenant
    -- checked after: OFFSET 0 keeps the lookup a subquery run once per
    -- answer, into which the tenant check is not pushed. With the tenant in
    -- the lookup, a generic plan made while messages was small walks every
    -- message of the tenant and filters on the id (see "Plans" in
    -- docs/performance.md).
    SELECT a.position, m.id, m.docnum, m.content_hash AS original_content_hash,
           (@details::jsonb[])[a.position] AS details,
           (@content_hashes::bytea[])[a.position] AS content_hash,
           (@message_type_ids::bigint[])[a.position] AS message_type_id
    FROM answered a
    CROSS JOIN LATERAL (
        SELECT m.id, m.tenant_id, m.docnum, m.content_hash FROM messages m WHERE m.id = a.original_id OFFSET 0
    ) m
    WHERE m.tenant_id = @tenant_id
), blocked AS (
    INSERT INTO audit_events (tenant_id, environment_id, message_type_id, message_id, action, actor, match_key, details)
    SELECT @tenant_id, @environment_id, original.message_type_id, original.id, @action, @actor, @key,
           original.details || jsonb_build_object(
               'original', jsonb_build_object('id', original.id, 'docnum', original.docnum),
               'content', CASE WHEN original.original_content_hash = original.content_hash THEN 'identical' ELSE 'changed' END)
    FROM original
    ORDER BY original.position
    RETURNING 1
)
SELECT k.same_request, k.response_body, k.message_id AS original_id, (SELECT count(*) FROM blocked) AS blocked
FROM k;

-- IdempotencyKeyReplayAll is IdempotencyKeyReplay for several single
-- messages at once (a group's replays, groupcommit.go), one element of
-- each parameter array per message, in order: one statement, one plan to
-- start and one audit insert for all of them instead of one each. Each
-- message gets a row, IdempotencyKeyReplay's row for it, with a NULL
-- response_body where that statement returns none (no live, completed
-- key). A key is the request's own, so a
-- single message's original is the key's message_id: a batch's key has a
-- request hash of its items' hashes, which no single message's request
-- hash equals. Each key and each original is looked up apart (OFFSET 0),
-- by its whole primary key, for the reasons IdempotencyKeyReplay gives;
-- the events take their ids in the messages' order, as the statements of
-- one message each, run in turn, took theirs.
-- name: IdempotencyKeyReplayAll :many
WITH k AS (
    SELECT a.*, ik.message_id, ik.request_hash = a.request_hash AS same_request, ik.response_body
    FROM ROWS FROM (unnest(@tenant_ids::bigint[]), unnest(@environment_ids::bigint[]), unnest(@scopes::text[]),
                    unnest(@keys::text[]), unnest(@request_hashes::bytea[]), unnest(@actors::text[]),
                    unnest(@details::jsonb[]), unnest(@content_hashes::bytea[]), unnest(@message_type_ids::bigint[]))
         WITH ORDINALITY AS a (tenant_id, environment_id, scope, key, request_hash, actor, details, content_hash,
                               message_type_id, ord)
    LEFT JOIN LATERAL (
        SELECT ik.message_id, ik.request_hash, ik.response_body
        FROM idempotency_keys ik
        WHERE ik.tenant_id = a.tenant_id AND ik.environment_id = a.environment_id AND ik.scope = a.scope
          AND ik.key = a.key AND ik.expires_at > now() AND ik.response_body IS NOT NULL
        OFFSET 0
    ) ik ON true
), original AS (
    SELECT k.ord, m.id, m.docnum, m.content_hash AS original_content_hash,
           nextval(pg_get_serial_sequence('audit_events', 'id')) AS event_id
    FROM k
    CROSS JOIN LATERAL (
        SELECT m.id, m.tenant_id, m.docnum, m.content_hash FROM messages m WHERE m.id = k.message_id OFFSET 0
    ) m
    WHERE k.same_request AND m.tenant_id = k.tenant_id
    ORDER BY k.ord
), blocked AS (
    INSERT INTO audit_events (id, tenant_id, environment_id, message_type_id, message_id, action, actor, match_key, details)
    OVERRIDING SYSTEM VALUE
    SELECT o.event_id, k.tenant_id, k.environment_id, k.message_type_id, o.id, @action, k.actor, k.key,
           k.details || jsonb_build_object(
               'original', jsonb_build_object('id', o.id, 'docnum', o.docnum),
               'content', CASE WHEN o.original_content_hash = k.content_hash THEN 'identical' ELSE 'changed' END)
    FROM original o
    JOIN k ON k.ord = o.ord
    ORDER BY o.event_id
)
SELECT coalesce(k.same_request, false)::boolean AS same_request, k.response_body, k.message_id AS original_id,
       (o.id IS NOT NULL)::int::bigint AS blocked
FROM k
LEFT JOIN original o ON o.ord = k.ord
ORDER BY k.ord;

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
