-- MessageInsert stores a message that claims no fingerprint, and so takes
-- no part in deduplication: one that has none, or one of a batch stored
-- under the Idempotency-Key of the whole request (the first message of a
-- request with a key is stored by IdempotencyKeyClaimAndStore). Like every
-- statement that stores a message, it also stores the message's business
-- key values (key_values): the first in its row (first_key_value), the
-- others in message_keys (migration 039).
-- name: MessageInsert :one
WITH inserted AS (
    INSERT INTO messages (
        tenant_id, environment_id, message_type_id, docnum, payload, content_hash,
        computed_fingerprint, source_endpoint, integration_id, idempotency_key, remote_addr,
        content_type, received_bytes, edi_frame, packet_position, packet_size, first_key_value
    ) VALUES (
        @tenant_id, @environment_id, @message_type_id, @docnum, @payload, @content_hash,
        @computed_fingerprint, @source_endpoint, @integration_id, @idempotency_key, @remote_addr,
        @content_type, @received_bytes, @edi_frame, @packet_position, @packet_size, (@key_values::text[])[1]
    )
    RETURNING id, received_at
), keys AS (
    INSERT INTO message_keys (tenant_id, message_id, value)
    SELECT @tenant_id, inserted.id, v FROM inserted, unnest((@key_values::text[])[2:]) v
)
SELECT id, received_at FROM inserted;

-- MessageStoreOrBlock is the whole fingerprint decision in one statement,
-- and so in one round trip and one transaction: it stores the message unless
-- another one holds its fingerprint; then it returns that holder and, when
-- the holder is inside the window (judged by the database clock now), writes
-- the message.duplicate_blocked audit event in the same statement. The
-- partial unique index settles concurrent inserts. A holder that committed
-- after this statement's snapshot was taken is not seen: then neither
-- inserted_id nor holder_id is set, and the caller runs the statement again.
-- details is the event's details object without "original" and "content",
-- which depend on the holder and are added here (see auditevent.BlockedDetails).
-- A blocked copy whose content differs from the holder's is kept in
-- blocked_copies with its sender, the form it arrived in and its key values,
-- beside its event, received when the event was created (the two name each
-- other by it: migration 015), unless the same changed copy already awaits
-- review: then that one counts another arrival (migration 033); an identical copy, or one that differs only in shape
-- (the same shape hash: a segment as an object in one and as a one-item
-- array in the other, see canon.ShapeHash), stores nothing more than the
-- event, whose content says "identical" or "shape_only". A stored message's
-- business key values are stored as MessageInsert stores them, and its shape
-- hash goes to shape_hash when it differs from its content hash.
-- name: MessageStoreOrBlock :one
WITH inserted AS (
    INSERT INTO messages (
        tenant_id, environment_id, message_type_id, docnum, payload, content_hash,
        computed_fingerprint, fingerprint, source_endpoint, integration_id, remote_addr,
        content_type, received_bytes, edi_frame, packet_position, packet_size, shape_hash, first_key_value
    ) VALUES (
        @tenant_id, @environment_id, @message_type_id, @docnum, @payload, @content_hash,
        @fingerprint, @fingerprint, @source_endpoint, @integration_id, @remote_addr,
        @content_type, @received_bytes, @edi_frame, @packet_position, @packet_size,
        nullif(@shape_hash::bytea, @content_hash::bytea), (@key_values::text[])[1]
    )
    ON CONFLICT (tenant_id, environment_id, fingerprint) WHERE fingerprint IS NOT NULL DO NOTHING
    RETURNING id, received_at
), keys AS (
    INSERT INTO message_keys (tenant_id, message_id, value)
    SELECT @tenant_id, inserted.id, v FROM inserted, unnest((@key_values::text[])[2:]) v
), holder AS (
    SELECT m.id, m.docnum, m.received_at,
           m.received_at > now() - make_interval(hours => @window_hours::int) AS within_window,
           CASE WHEN m.content_hash = @content_hash::bytea THEN 'identical'
                WHEN coalesce(m.shape_hash, m.content_hash) = @shape_hash::bytea THEN 'shape_only'
                ELSE 'changed' END AS content
    FROM messages m
    WHERE m.tenant_id = @tenant_id AND m.environment_id = @environment_id AND m.fingerprint = @fingerprint
      AND NOT EXISTS (SELECT FROM inserted)
), blocked AS (
    INSERT INTO audit_events (tenant_id, environment_id, message_type_id, message_id, action, actor, match_key, details)
    SELECT @tenant_id, @environment_id, @message_type_id, holder.id, @action, @actor, @fingerprint,
           @details::jsonb || jsonb_build_object(
               'original', jsonb_build_object('id', holder.id, 'docnum', holder.docnum),
               'content', holder.content)
    FROM holder
    WHERE holder.within_window
    RETURNING id, created_at
), kept AS (
    INSERT INTO blocked_copies (tenant_id, environment_id, message_type_id, audit_event_id, received_at,
                                original_message_id, docnum, payload, content_hash, sender,
                                content_type, received_bytes, edi_frame, packet_position, packet_size, key_values)
    SELECT @tenant_id, @environment_id, @message_type_id, blocked.id, blocked.created_at,
           holder.id, @docnum, @payload, @content_hash, @sender::jsonb,
           @content_type, @received_bytes, @edi_frame, @packet_position, @packet_size, @key_values::text[]
    FROM blocked, holder
    WHERE holder.content = 'changed'
    ON CONFLICT (original_message_id, content_hash) WHERE review_state = 'open' DO UPDATE
    SET copies = blocked_copies.copies + 1,
        last_seen_at = greatest(blocked_copies.received_at, blocked_copies.last_seen_at, excluded.received_at)
)
SELECT i.id AS inserted_id, i.received_at AS inserted_at,
       h.id AS holder_id, h.docnum AS holder_docnum, h.received_at AS holder_received_at, h.within_window
FROM (VALUES (1)) AS one (x)
LEFT JOIN inserted i ON true
LEFT JOIN holder h ON true;

-- MessageStoreOrBlockAll is MessageStoreOrBlock for several messages at
-- once, one element of each parameter array per message, in order: one
-- statement decides a batch or packet (up to 1 MiB of its payload), with
-- the same decision and the same rows for each message as
-- MessageStoreOrBlock run for each in turn. The statement sees one
-- snapshot, and its CTEs do not see the rows it inserts, so a message
-- repeating an earlier one of the same call (tenant, environment and
-- fingerprint) is settled here: only the first of them is offered to the
-- insert, and each later one is judged against the row that then holds the
-- fingerprint, the one inserted now or the one the snapshot sees, as a
-- statement of its own would have judged it. The partial unique index still
-- settles concurrent inserts. A message whose holder the snapshot does not
-- see (committed meanwhile), or whose holder is outside its window, gets
-- neither inserted_id nor an event, as from MessageStoreOrBlock, and the
-- caller decides it alone. The events of the blocked messages take their
-- ids from audit_events' sequence first, in the messages' order, so that
-- each changed copy names its own event although several copies may block
-- against one holder. The holder is looked up in a subquery kept apart by
-- OFFSET 0, so that every plan probes uq_messages_fingerprint per message:
-- joined directly, a generic plan made while messages was empty reads the
-- whole table (docs/performance.md, "Plans"). Array elements cannot be NULL
-- here (sqlc passes Go slices of values), so the nullable columns are sent
-- as a value that no message has: '' for no docnum, the nil UUID for no
-- integration, 0 for no packet position and size; payload, received_bytes
-- and edi_frame are NULL for a nil slice. A message's first business key
-- value is in first_key_values ('' for none) and goes to its row, as
-- MessageInsert puts it; key_values are all messages' other values in one array, each with the
-- ordinal (1 for the first message) of its message in key_ords, and go to
-- message_keys. The arrays are read side by side by one ROWS FROM of
-- unnests, once each: a subscript walks its array from the start, so
-- reading a hundred messages' payloads by subscript cost PostgreSQL a walk
-- per message (sqlc knows no unnest of several arrays, but ROWS FROM it
-- does).
-- name: MessageStoreOrBlockAll :many
WITH input AS (
    SELECT a.*,
           row_number() OVER (PARTITION BY a.tenant_id, a.environment_id, a.fingerprint ORDER BY a.ord) = 1 AS offered
    FROM ROWS FROM (unnest(@tenant_ids::bigint[]), unnest(@environment_ids::bigint[]), unnest(@message_type_ids::bigint[]), unnest(@docnums::text[]),
                    unnest(@payloads::json[]), unnest(@content_hashes::bytea[]), unnest(@shape_hashes::bytea[]), unnest(@fingerprints::text[]),
                    unnest(@source_endpoints::text[]), unnest(@integration_ids::uuid[]), unnest(@remote_addrs::text[]), unnest(@actors::text[]),
                    unnest(@content_types::text[]), unnest(@received_bytes::bytea[]), unnest(@edi_frames::json[]),
                    unnest(@packet_positions::int[]), unnest(@packet_sizes::int[]),
                    unnest(@window_hours::int[]), unnest(@details::jsonb[]), unnest(@senders::jsonb[]), unnest(@first_key_values::text[]))
         WITH ORDINALITY AS a (tenant_id, environment_id, message_type_id, docnum, payload, content_hash, shape_hash,
                               fingerprint, source_endpoint, integration_id, remote_addr, actor, content_type,
                               received_bytes, edi_frame, packet_position, packet_size, window_hours, details, sender,
                               first_key_value, ord)
), inserted AS (
    INSERT INTO messages (
        tenant_id, environment_id, message_type_id, docnum, payload, content_hash,
        computed_fingerprint, fingerprint, source_endpoint, integration_id, remote_addr,
        content_type, received_bytes, edi_frame, packet_position, packet_size, shape_hash, first_key_value
    )
    SELECT i.tenant_id, i.environment_id, i.message_type_id, nullif(i.docnum, ''), i.payload, i.content_hash,
           i.fingerprint, i.fingerprint, i.source_endpoint, nullif(i.integration_id, '00000000-0000-0000-0000-000000000000'),
           i.remote_addr, i.content_type, i.received_bytes, i.edi_frame, nullif(i.packet_position, 0), nullif(i.packet_size, 0),
           nullif(i.shape_hash, i.content_hash), nullif(i.first_key_value, '')
    FROM input i
    WHERE i.offered
    ORDER BY i.ord
    ON CONFLICT (tenant_id, environment_id, fingerprint) WHERE fingerprint IS NOT NULL DO NOTHING
    RETURNING id, received_at, tenant_id, environment_id, fingerprint, docnum, content_hash, shape_hash
), judged AS (
    -- Each message with the row it is judged against: its own when it was
    -- inserted, the one inserted now for an earlier copy of it, else the
    -- holder the snapshot sees (none when that committed meanwhile).
    SELECT i.*, n.id IS NOT NULL AND i.offered AS stored,
           coalesce(n.id, h.id) AS holder_id, coalesce(n.docnum, h.docnum) AS holder_docnum,
           coalesce(n.received_at, h.received_at) AS holder_received_at,
           coalesce(n.received_at, h.received_at) > now() - make_interval(hours => i.window_hours) AS within_window,
           CASE WHEN coalesce(n.content_hash, h.content_hash) = i.content_hash THEN 'identical'
                WHEN coalesce(n.shape_hash, n.content_hash, h.shape_hash, h.content_hash) = i.shape_hash THEN 'shape_only'
                ELSE 'changed' END AS content
    FROM input i
    LEFT JOIN inserted n
           ON n.tenant_id = i.tenant_id AND n.environment_id = i.environment_id AND n.fingerprint = i.fingerprint
    LEFT JOIN LATERAL (
        SELECT m.id, m.docnum, m.received_at, m.content_hash, m.shape_hash
        FROM messages m
        WHERE m.tenant_id = i.tenant_id AND m.environment_id = i.environment_id AND m.fingerprint = i.fingerprint
          AND n.id IS NULL
        OFFSET 0
    ) h ON true
), event AS (
    SELECT j.ord, nextval(pg_get_serial_sequence('audit_events', 'id')) AS id
    FROM judged j
    WHERE NOT j.stored AND j.within_window
    ORDER BY j.ord
), blocked AS (
    INSERT INTO audit_events (id, tenant_id, environment_id, message_type_id, message_id, action, actor, match_key, details)
    OVERRIDING SYSTEM VALUE
    SELECT e.id, j.tenant_id, j.environment_id, j.message_type_id, j.holder_id, @action, j.actor, j.fingerprint,
           j.details || jsonb_build_object(
               'original', jsonb_build_object('id', j.holder_id, 'docnum', j.holder_docnum),
               'content', j.content)
    FROM event e
    JOIN judged j ON j.ord = e.ord
    ORDER BY e.id
    RETURNING id, created_at
), kept AS (
    INSERT INTO blocked_copies (tenant_id, environment_id, message_type_id, audit_event_id, received_at,
                                original_message_id, docnum, payload, content_hash, sender,
                                content_type, received_bytes, edi_frame, packet_position, packet_size, key_values,
                                copies, last_seen_at)
    SELECT c.tenant_id, c.environment_id, c.message_type_id, c.audit_event_id, c.received_at,
           c.holder_id, nullif(c.docnum, ''), c.payload, c.content_hash, c.sender,
           c.content_type, c.received_bytes, c.edi_frame, nullif(c.packet_position, 0), nullif(c.packet_size, 0),
           CASE WHEN c.first_key_value <> '' THEN array_prepend(c.first_key_value, ARRAY(
               SELECT k.value
               FROM ROWS FROM (unnest(@key_ords::int[]), unnest(@key_values::text[])) WITH ORDINALITY AS k (ord, value, n)
               WHERE k.ord = c.ord ORDER BY k.n)) END,
           c.copies, CASE WHEN c.copies > 1 THEN c.received_at END
    FROM (
        -- The same changed copy twice in one call is one row with two
        -- arrivals: an upsert cannot touch a row twice in one statement.
        SELECT DISTINCT ON (j.holder_id, j.content_hash) j.*, b.id AS audit_event_id, b.created_at AS received_at,
               count(*) OVER (PARTITION BY j.holder_id, j.content_hash) AS copies
        FROM blocked b
        JOIN event e ON e.id = b.id
        JOIN judged j ON j.ord = e.ord
        WHERE j.content = 'changed'
        ORDER BY j.holder_id, j.content_hash, j.ord
    ) c
    ORDER BY c.ord
    ON CONFLICT (original_message_id, content_hash) WHERE review_state = 'open' DO UPDATE
    SET copies = blocked_copies.copies + excluded.copies,
        last_seen_at = greatest(blocked_copies.received_at, blocked_copies.last_seen_at, excluded.received_at)
), keys AS (
    INSERT INTO message_keys (tenant_id, message_id, value)
    SELECT j.tenant_id, j.holder_id, k.value
    FROM judged j
    JOIN ROWS FROM (unnest(@key_ords::int[]), unnest(@key_values::text[])) AS k (ord, value) ON k.ord = j.ord
    WHERE j.stored
), stored AS (
    -- stored and held are the answer's two halves, joined to every
    -- message below: the left joins are how sqlc knows they may be NULL.
    SELECT j.ord, j.holder_id::bigint AS id, j.holder_received_at::timestamptz AS received_at
    FROM judged j WHERE j.stored
), held AS (
    SELECT j.ord, j.holder_id::bigint AS id, j.holder_docnum::text AS docnum,
           j.holder_received_at::timestamptz AS received_at, j.within_window::boolean AS within_window
    FROM judged j WHERE NOT j.stored AND j.holder_id IS NOT NULL
)
SELECT s.id AS inserted_id, s.received_at AS inserted_at,
       h.id AS holder_id, h.docnum AS holder_docnum, h.received_at AS holder_received_at, h.within_window
FROM judged j
LEFT JOIN stored s ON s.ord = j.ord
LEFT JOIN held h ON h.ord = j.ord
ORDER BY j.ord;

-- MessageStoreNew stores several messages, no two of which share a claim
-- (tenant, environment and fingerprint; the caller sees to that), each
-- unless its claim is taken, with its business keys and its deliveries, and
-- returns for each one it stored its claim, its id and time, and the ids
-- and destinations of its deliveries: one row per delivery (or one with
-- neither for a message without), in the order of the messages' ids and
-- then the deliveries'. It is MessageStoreOrBlockAll for messages that are
-- most likely new (their bytes were not seen lately), without the lookup
-- of a holder and the inserts of a blocked message: every one it stores is
-- decided as that statement would have decided it, and each one it finds
-- taken (by a holder in or out of its window, or by a concurrent insert) is
-- left as it was, for MessageStoreOrBlockAll to decide after it in the same
-- transaction. The deliveries are written as DeliveryCreateForStored writes
-- them, which then need not find the messages again. The caller finds each
-- stored message's place by its claim, and the keys beyond the first name
-- theirs by the same three values, so the rows inserted are joined to
-- nothing but their keys and deliveries; the destinations are looked up
-- apart (OFFSET 0) once per environment the messages were stored in, not
-- per message (docs/performance.md, "Stored messages found by their
-- claims"). Nulls are sent as MessageStoreOrBlockAll's are. The arrays
-- are read by unnests in one select list, which PostgreSQL steps through
-- side by side (ProjectSet) and hands on row by row, in the arrays'
-- order, so the messages' ids follow the order they were sent in; ROWS
-- FROM would first copy each array's elements into a tuplestore of its
-- own (docs/performance.md, "The arrays read in step").
-- name: MessageStoreNew :many
WITH inserted AS (
    INSERT INTO messages (
        tenant_id, environment_id, message_type_id, docnum, payload, content_hash,
        computed_fingerprint, fingerprint, source_endpoint, integration_id, remote_addr,
        content_type, received_bytes, edi_frame, packet_position, packet_size, shape_hash, first_key_value
    )
    SELECT i.tenant_id, i.environment_id, i.message_type_id, nullif(i.docnum, ''), i.payload, i.content_hash,
           i.fingerprint, i.fingerprint, i.source_endpoint, nullif(i.integration_id, '00000000-0000-0000-0000-000000000000'),
           i.remote_addr, i.content_type, i.received_bytes, i.edi_frame, nullif(i.packet_position, 0), nullif(i.packet_size, 0),
           nullif(i.shape_hash, i.content_hash), nullif(i.first_key_value, '')
    FROM (SELECT unnest(@tenant_ids::bigint[]) AS tenant_id, unnest(@environment_ids::bigint[]) AS environment_id,
                 unnest(@message_type_ids::bigint[]) AS message_type_id, unnest(@docnums::text[]) AS docnum,
                 unnest(@payloads::json[]) AS payload, unnest(@content_hashes::bytea[]) AS content_hash,
                 unnest(@shape_hashes::bytea[]) AS shape_hash, unnest(@fingerprints::text[]) AS fingerprint,
                 unnest(@source_endpoints::text[]) AS source_endpoint, unnest(@integration_ids::uuid[]) AS integration_id,
                 unnest(@remote_addrs::text[]) AS remote_addr, unnest(@content_types::text[]) AS content_type,
                 unnest(@received_bytes::bytea[]) AS received_bytes, unnest(@edi_frames::json[]) AS edi_frame,
                 unnest(@packet_positions::int[]) AS packet_position, unnest(@packet_sizes::int[]) AS packet_size,
                 unnest(@first_key_values::text[]) AS first_key_value) i
    ON CONFLICT (tenant_id, environment_id, fingerprint) WHERE fingerprint IS NOT NULL DO NOTHING
    RETURNING id, received_at, tenant_id, environment_id, message_type_id, fingerprint
), keys AS (
    INSERT INTO message_keys (tenant_id, message_id, value)
    SELECT n.tenant_id, n.id, k.value
    FROM inserted n
    JOIN (SELECT unnest(@key_tenant_ids::bigint[]) AS tenant_id, unnest(@key_environment_ids::bigint[]) AS environment_id,
                 unnest(@key_fingerprints::text[]) AS fingerprint, unnest(@key_values::text[]) AS value) k
      ON k.tenant_id = n.tenant_id AND k.environment_id = n.environment_id AND k.fingerprint = n.fingerprint
), taking AS (
    SELECT d.id, d.tenant_id, d.environment_id, d.message_type_ids
    FROM (SELECT DISTINCT n.tenant_id, n.environment_id FROM inserted n) e
    CROSS JOIN LATERAL (
        SELECT d.id, d.tenant_id, d.environment_id, d.message_type_ids FROM destinations d
        WHERE d.tenant_id = e.tenant_id AND d.environment_id = e.environment_id AND d.deleted_at IS NULL
        OFFSET 0
    ) d
), delivered AS (
    INSERT INTO deliveries (tenant_id, environment_id, message_id, destination_id, message_type_id)
    SELECT n.tenant_id, n.environment_id, n.id, d.id, n.message_type_id
    FROM inserted n
    JOIN taking d ON d.tenant_id = n.tenant_id AND d.environment_id = n.environment_id
    WHERE cardinality(d.message_type_ids) = 0 OR n.message_type_id = ANY(d.message_type_ids)
    ORDER BY n.id, d.id
    RETURNING id, destination_id, message_id
)
-- The left join is how sqlc knows that a message may have no delivery.
SELECT n.tenant_id, n.environment_id, n.fingerprint::text AS fingerprint, n.id, n.received_at,
       v.id AS delivery_id, v.destination_id
FROM inserted n
LEFT JOIN delivered v ON v.message_id = n.id
ORDER BY n.id, v.id;

-- MessageBlockRetransmissions blocks several messages as duplicates of the
-- messages already holding their fingerprints, or changes nothing: it
-- records one message.duplicate_blocked event per message, as
-- MessageStoreOrBlockAll would, only when every message has a holder the
-- snapshot sees, inside its window, with the same content or the same
-- shape (so that no copy of it need be kept). That is a retransmission,
-- which the caller expects when the tenant sent the same bytes lately, and
-- then neither the payloads travel nor does the statement start the
-- inserts of messages, copies and keys. A message with a holder never
-- claims the fingerprint, so no claim lock is needed and no unique index
-- waited on; the holder's window and content are judged as
-- MessageStoreOrBlockAll judges them, in the same snapshot. With any
-- message not held so, no row comes back and the caller decides them all
-- with MessageStoreOrBlockAll, as if this had not run. The holder is
-- looked up apart (OFFSET 0) for the reason MessageStoreOrBlockAll gives.
-- name: MessageBlockRetransmissions :many
WITH judged AS (
    SELECT a.*, h.id AS holder_id, h.docnum AS holder_docnum, h.received_at AS holder_received_at,
           CASE WHEN h.content_hash = a.content_hash THEN 'identical' ELSE 'shape_only' END AS content,
           coalesce(h.received_at > now() - make_interval(hours => a.window_hours)
                    AND (h.content_hash = a.content_hash OR coalesce(h.shape_hash, h.content_hash) = a.shape_hash),
                    false) AS held
    FROM ROWS FROM (unnest(@tenant_ids::bigint[]), unnest(@environment_ids::bigint[]), unnest(@message_type_ids::bigint[]),
                    unnest(@content_hashes::bytea[]), unnest(@shape_hashes::bytea[]), unnest(@fingerprints::text[]),
                    unnest(@actors::text[]), unnest(@window_hours::int[]), unnest(@details::jsonb[]))
         WITH ORDINALITY AS a (tenant_id, environment_id, message_type_id, content_hash, shape_hash, fingerprint,
                               actor, window_hours, details, ord)
    LEFT JOIN LATERAL (
        SELECT m.id, m.docnum, m.received_at, m.content_hash, m.shape_hash
        FROM messages m
        WHERE m.tenant_id = a.tenant_id AND m.environment_id = a.environment_id AND m.fingerprint = a.fingerprint
        OFFSET 0
    ) h ON true
), decision AS (
    SELECT bool_and(j.held) AS all_held FROM judged j
), event AS (
    SELECT j.ord, nextval(pg_get_serial_sequence('audit_events', 'id')) AS id
    FROM judged j, decision d
    WHERE d.all_held
    ORDER BY j.ord
), blocked AS (
    INSERT INTO audit_events (id, tenant_id, environment_id, message_type_id, message_id, action, actor, match_key, details)
    OVERRIDING SYSTEM VALUE
    SELECT e.id, j.tenant_id, j.environment_id, j.message_type_id, j.holder_id, @action, j.actor, j.fingerprint,
           j.details || jsonb_build_object(
               'original', jsonb_build_object('id', j.holder_id, 'docnum', j.holder_docnum),
               'content', j.content)
    FROM event e
    JOIN judged j ON j.ord = e.ord
    ORDER BY e.id
)
SELECT j.holder_id, j.holder_docnum, j.holder_received_at
FROM judged j, decision d
WHERE d.all_held
ORDER BY j.ord;

-- MessageClaimLocks takes, until the transaction ends, the advisory locks
-- a request takes before it claims anything (ingest.claimLocks), in the
-- order given: each one shared where shared says so, else exclusive.
-- Requests that sort their locks the same way take them in one global
-- order, so two requests holding the same messages in different orders
-- wait for each other instead of deadlocking on the unique indexes.
-- name: MessageClaimLocks :exec
SELECT CASE WHEN l.shared THEN pg_advisory_xact_lock_shared(l.id) ELSE pg_advisory_xact_lock(l.id) END
FROM ROWS FROM (unnest(@claim_locks::bigint[]), unnest(@shared::boolean[])) AS l (id, shared);

-- MessageReleaseFingerprint hands a fingerprint back after its window passed,
-- so that a newer message can claim it. It changes nothing when another
-- transaction released it first. The environment completes the key of
-- uq_messages_fingerprint: without it, a generic plan may walk all of a
-- tenant's fingerprints in that index.
-- name: MessageReleaseFingerprint :execrows
UPDATE messages SET fingerprint = NULL
WHERE tenant_id = @tenant_id AND environment_id = @environment_id AND id = @id AND fingerprint = @fingerprint;

-- name: MessageCount :one
SELECT count(*) FROM messages WHERE tenant_id = @tenant_id AND environment_id = @environment_id;

-- MessageGetForAdmin loads a message with the names an admin reads and its
-- type's current duplicate_key_fields, within the signed-in user's scope
-- (NULL: a global user); a message outside the scope is not found. Of the
-- bytes it was received as (when not JSON) it loads the first shown_bytes,
-- what the page shows, and their size; MessageReceivedPart downloads them.
-- A message stored without its view (migration 040) loads them whole as
-- view_bytes, with its edi_frame, to rebuild it (package storedview).
-- name: MessageGetForAdmin :one
SELECT m.id, m.docnum, m.payload, m.content_hash, m.computed_fingerprint, m.fingerprint, m.source_endpoint,
       m.integration_id, m.idempotency_key, m.remote_addr, m.received_at, m.message_type_id,
       (CASE WHEN m.payload IS NULL THEN m.received_bytes END)::bytea AS view_bytes, m.edi_frame,
       m.content_type, substr(m.received_bytes, 1, @shown_bytes::int) AS received_head,
       COALESCE(octet_length(m.received_bytes), 0)::int AS received_size, m.packet_position, m.packet_size,
       t.slug AS tenant_slug, env.slug AS environment_slug, mt.code AS message_type_code,
       mt.duplicate_key_fields
FROM messages m
JOIN tenants t ON t.id = m.tenant_id
JOIN environments env ON env.id = m.environment_id
JOIN message_types mt ON mt.id = m.message_type_id
WHERE m.id = @id AND (sqlc.narg(scope_tenant_id)::bigint IS NULL OR m.tenant_id = sqlc.narg(scope_tenant_id));

-- MessageReceivedPart reads part_length bytes from byte part_start (the
-- first is 1) of what a message was received as (its payload, byte for
-- byte, when it came as JSON), within the signed-in user's scope, with
-- their content type and whole size. A download reads them a part at a
-- time, so that it holds one part in memory whatever their size.
-- name: MessageReceivedPart :one
SELECT m.content_type,
       COALESCE(octet_length(m.received_bytes), octet_length(m.payload::text))::bigint AS size,
       substr(COALESCE(m.received_bytes, convert_to(m.payload::text, 'UTF8')), sqlc.arg(part_start)::int, sqlc.arg(part_length)::int)::bytea AS part
FROM messages m
WHERE m.id = @id AND (sqlc.narg(scope_tenant_id)::bigint IS NULL OR m.tenant_id = sqlc.narg(scope_tenant_id));

-- MessageListOfType lists a message type's most recent messages, newest
-- first, along the messages_type_received index, without their payloads:
-- the editor offers them as samples and analyses them in batches of
-- payload_bytes, so that a sample of large documents never sits in memory
-- at once. payload_bytes reads the stored size without fetching the value;
-- a view rebuilt from the bytes received (migration 040) counts four times
-- their size, with them: an X12 view is about three times its segments.
-- name: MessageListOfType :many
SELECT m.id, m.environment_id, env.slug AS environment_slug, m.docnum, m.received_at,
       (m.idempotency_key IS NOT NULL)::boolean AS keyed,
       COALESCE(octet_length(m.payload::text), 4 * octet_length(m.received_bytes))::bigint AS payload_bytes
FROM messages m
JOIN environments env ON env.id = m.environment_id
WHERE m.tenant_id = @tenant_id AND m.message_type_id = @message_type_id
  AND (sqlc.narg(scope_tenant_id)::bigint IS NULL OR m.tenant_id = sqlc.narg(scope_tenant_id))
ORDER BY m.received_at DESC, m.id DESC
LIMIT @max_messages;

-- MessagePayloadsOfType loads the payloads of some of a message type's
-- messages; ids of other types or tenants are left out. A message stored
-- without its view has what rebuilds it instead, as from MessageGetForAdmin.
-- name: MessagePayloadsOfType :many
SELECT m.id, m.docnum, m.computed_fingerprint, m.received_at, m.payload,
       m.content_type, (CASE WHEN m.payload IS NULL THEN m.received_bytes END)::bytea AS view_bytes, m.edi_frame
FROM messages m
WHERE m.tenant_id = @tenant_id AND m.message_type_id = @message_type_id AND m.id = ANY(@ids::bigint[])
  AND (sqlc.narg(scope_tenant_id)::bigint IS NULL OR m.tenant_id = sqlc.narg(scope_tenant_id));

-- The MessageSearch queries are the admin's messages page: each returns the
-- ids of one page of messages, newest first, keyset paginated on
-- (received_at, id) below (before_time, before_id), received at or after
-- since. Each is driven by the one index that fits the most selective
-- filter given, and names that filter as a required parameter, so that
-- even a generic plan (which a prepared statement may switch to, knowing
-- no parameter) walks that index; the other filters are optional (NULL
-- matches anything) and only sift what the index yields. scope_tenant_id
-- is the signed-in user's tenant, NULL for a global user. MessageSearchPage
-- then loads the rows of the page.
--
-- The queries that list an environment's or a tenant's range repeat the
-- lower time bound as a row comparison led by the range's column, which
-- only the range's own index can take as an index condition. Without it a
-- generic plan may prefer to walk messages_time, whose order is the
-- table's physical order, and sift it for the range: cheap in its
-- estimate, and a walk through most of the table for a rare environment.

-- MessageSearchByKey finds the messages one of whose business key values
-- (message_key_values: the first in the message's row since migration 039,
-- the others in message_keys) is value. The key's entries are read first, always
-- (MATERIALIZED): a value names a handful of messages, and a planner that
-- misjudges that (message_keys analyzed when it was empty guesses 0.5 %
-- of the table) walked all of messages_time instead, probing the key for
-- every message (10 s at 3 million messages).
-- name: MessageSearchByKey :many
WITH k AS MATERIALIZED (
    SELECT DISTINCT k.tenant_id, k.message_id FROM message_key_values k
    WHERE k.value = @value::text
      AND (sqlc.narg(scope_tenant_id)::bigint IS NULL OR k.tenant_id = sqlc.narg(scope_tenant_id))
)
SELECT m.id
FROM k
JOIN messages m ON m.tenant_id = k.tenant_id AND m.id = k.message_id
WHERE true
  AND (sqlc.narg(scope_tenant_id)::bigint IS NULL OR m.tenant_id = sqlc.narg(scope_tenant_id))
  AND (sqlc.narg(tenant_id)::bigint IS NULL OR m.tenant_id = sqlc.narg(tenant_id))
  AND (sqlc.narg(environment_id)::bigint IS NULL OR m.environment_id = sqlc.narg(environment_id))
  AND (sqlc.narg(message_type_id)::bigint IS NULL OR m.message_type_id = sqlc.narg(message_type_id))
  AND (sqlc.narg(docnum)::text IS NULL OR m.docnum = sqlc.narg(docnum))
  AND m.received_at >= @since AND (m.received_at, m.id) < (@before_time::timestamptz, @before_id::bigint)
ORDER BY m.received_at DESC, m.id DESC
LIMIT @page_size;

-- MessageSearchByControlNumber finds the messages of the X12 and EDIFACT
-- interchanges with one interchange control number
-- (interchanges_control_number_lookup): those its answer names that its
-- own transaction stored, whose received_at is the interchange's (both
-- the transaction's now()), not the originals its blocked duplicates name.
-- name: MessageSearchByControlNumber :many
SELECT m.id
FROM interchanges i
CROSS JOIN LATERAL json_array_elements(i.response_body->'messages') AS a (answer)
JOIN messages m ON m.tenant_id = i.tenant_id AND m.id = (a.answer->>'id')::bigint AND m.received_at = i.received_at
WHERE i.control_number = @control_number
  AND (sqlc.narg(scope_tenant_id)::bigint IS NULL OR i.tenant_id = sqlc.narg(scope_tenant_id))
  AND (sqlc.narg(tenant_id)::bigint IS NULL OR i.tenant_id = sqlc.narg(tenant_id))
  AND (sqlc.narg(environment_id)::bigint IS NULL OR i.environment_id = sqlc.narg(environment_id))
  AND (sqlc.narg(message_type_id)::bigint IS NULL OR m.message_type_id = sqlc.narg(message_type_id))
  AND (sqlc.narg(docnum)::text IS NULL OR m.docnum = sqlc.narg(docnum))
  AND m.received_at >= @since AND (m.received_at, m.id) < (@before_time::timestamptz, @before_id::bigint)
ORDER BY m.received_at DESC, m.id DESC
LIMIT @page_size;

-- MessageSearchByDocnum finds the messages with one docnum (messages_docnum).
-- name: MessageSearchByDocnum :many
SELECT m.id
FROM messages m
WHERE m.docnum = @docnum
  AND (sqlc.narg(scope_tenant_id)::bigint IS NULL OR m.tenant_id = sqlc.narg(scope_tenant_id))
  AND (sqlc.narg(tenant_id)::bigint IS NULL OR m.tenant_id = sqlc.narg(tenant_id))
  AND (sqlc.narg(environment_id)::bigint IS NULL OR m.environment_id = sqlc.narg(environment_id))
  AND (sqlc.narg(message_type_id)::bigint IS NULL OR m.message_type_id = sqlc.narg(message_type_id))
  AND m.received_at >= @since AND (m.received_at, m.id) < (@before_time::timestamptz, @before_id::bigint)
ORDER BY m.received_at DESC, m.id DESC
LIMIT @page_size;

-- MessageSearchOfType lists a message type's messages (messages_type_received).
-- name: MessageSearchOfType :many
SELECT m.id
FROM messages m
WHERE m.tenant_id = @tenant_id AND m.message_type_id = @message_type_id
  AND (sqlc.narg(scope_tenant_id)::bigint IS NULL OR m.tenant_id = sqlc.narg(scope_tenant_id))
  AND (sqlc.narg(environment_id)::bigint IS NULL OR m.environment_id = sqlc.narg(environment_id))
  AND m.received_at >= @since AND (m.received_at, m.id) < (@before_time::timestamptz, @before_id::bigint)
ORDER BY m.received_at DESC, m.id DESC
LIMIT @page_size;

-- MessageSearchOfEnvironment lists an environment's messages
-- (messages_environment_time).
-- name: MessageSearchOfEnvironment :many
SELECT m.id
FROM messages m
WHERE m.environment_id = @environment_id
  AND (sqlc.narg(scope_tenant_id)::bigint IS NULL OR m.tenant_id = sqlc.narg(scope_tenant_id))
  AND m.received_at >= @since AND (m.received_at, m.id) < (@before_time::timestamptz, @before_id::bigint)
  AND (m.environment_id, m.received_at) >= (@environment_id, @since)
ORDER BY m.received_at DESC, m.id DESC
LIMIT @page_size;

-- MessageSearchOfTenant lists a tenant's messages (messages_tenant_time).
-- name: MessageSearchOfTenant :many
SELECT m.id
FROM messages m
WHERE m.tenant_id = @tenant_id
  AND (sqlc.narg(scope_tenant_id)::bigint IS NULL OR m.tenant_id = sqlc.narg(scope_tenant_id))
  AND m.received_at >= @since AND (m.received_at, m.id) < (@before_time::timestamptz, @before_id::bigint)
  AND (m.tenant_id, m.received_at) >= (@tenant_id, @since)
ORDER BY m.received_at DESC, m.id DESC
LIMIT @page_size;

-- MessageSearchAll lists every tenant's messages, for a global user
-- (messages_time).
-- name: MessageSearchAll :many
SELECT m.id
FROM messages m
WHERE m.received_at >= @since AND (m.received_at, m.id) < (@before_time::timestamptz, @before_id::bigint)
ORDER BY m.received_at DESC, m.id DESC
LIMIT @page_size;

-- MessageSearchPage loads the rows of a page of messages that a
-- MessageSearch query found, in its order, without their payloads.
-- name: MessageSearchPage :many
SELECT m.id, m.received_at, m.docnum, m.source_endpoint, m.content_type,
       (m.idempotency_key IS NOT NULL)::boolean AS keyed, (m.fingerprint IS NOT NULL)::boolean AS holds_fingerprint,
       m.packet_position, m.packet_size,
       t.slug AS tenant_slug, env.slug AS environment_slug, mt.code AS message_type_code
FROM messages m
JOIN tenants t ON t.id = m.tenant_id
JOIN environments env ON env.id = m.environment_id
JOIN message_types mt ON mt.id = m.message_type_id
WHERE m.id = ANY(@ids::bigint[])
  AND (sqlc.narg(scope_tenant_id)::bigint IS NULL OR m.tenant_id = sqlc.narg(scope_tenant_id))
ORDER BY m.received_at DESC, m.id DESC;

-- MessageExpireLock picks and locks up to batch_size messages past their
-- tenant's effective retention: the longest of RETENTION_MESSAGES
-- (messages_seconds), IDEMPOTENCY_KEY_TTL (key_ttl_seconds; an unexpired
-- key points at its message) and the tenant's longest duplicate window
-- (NULL meaning default_window_hours), plus grace_seconds, so that a
-- message an ingest transaction has just judged inside its window is not
-- deleted under it. A message with a delivery still pending or an attempt
-- holding a place of its destination, or named by an unexpired idempotency key (one kept
-- for its type's window, say), is kept. SKIP LOCKED passes over rows other
-- sweepers or requests hold, so nobody waits. Each tenant's oldest rows are
-- read along messages_tenant_time, and the batch stops once it is full.
-- name: MessageExpireLock :many
SELECT m.id
FROM tenants t
CROSS JOIN LATERAL (
    SELECT greatest(make_interval(secs => @messages_seconds::float8),
                    make_interval(secs => @key_ttl_seconds::float8),
                    make_interval(hours => (SELECT coalesce(max(coalesce(mt.duplicate_window_hours, @default_window_hours::int)), 0)
                                            FROM message_types mt WHERE mt.tenant_id = t.id)))
           + make_interval(secs => @grace_seconds::float8) AS period
) keep
CROSS JOIN LATERAL (
    SELECT m.id
    FROM messages m
    WHERE m.tenant_id = t.id AND m.received_at < now() - keep.period
      AND NOT EXISTS (SELECT FROM deliveries d
                      WHERE d.message_id = m.id
                        AND (d.status = 'pending'
                             OR EXISTS (SELECT FROM destination_places p
                                        WHERE p.destination_id = d.destination_id AND p.delivery_id = d.id AND p.expires_at > now())))
      AND NOT EXISTS (SELECT FROM idempotency_keys k
                      WHERE k.tenant_id = m.tenant_id AND k.message_id = m.id AND k.expires_at > now())
    ORDER BY m.received_at, m.id
    LIMIT @batch_size::int
    FOR UPDATE OF m SKIP LOCKED
) m
LIMIT @batch_size::int;

-- MessageExpireDeliveries deletes the finished deliveries of messages that
-- MessageExpireLock locked, with their attempts; a place that one held
-- until it expired is free already. A
-- delivery that an admin requeued meanwhile is pending again: the delete
-- re-reads it, passes over it, and MessageExpireDelete then keeps its
-- message.
-- name: MessageExpireDeliveries :execrows
WITH gone AS (
    DELETE FROM deliveries d
    WHERE d.message_id = ANY(@ids::bigint[]) AND d.status <> 'pending'
      AND NOT EXISTS (SELECT FROM destination_places p
                      WHERE p.destination_id = d.destination_id AND p.delivery_id = d.id AND p.expires_at > now())
    RETURNING d.id
), attempts AS (
    DELETE FROM delivery_attempts a USING gone WHERE a.delivery_id = gone.id
)
SELECT count(*) FROM gone;

-- MessageExpireDelete deletes locked messages that no longer have a
-- delivery (MessageExpireDeliveries ran first, in the same transaction)
-- nor an unexpired idempotency key, with their business key values, their
-- expired idempotency keys and the blocked copies kept against them or
-- released as them; it returns how many messages and copies went. A copy
-- both kept against and released as doomed messages is deleted by the first
-- of the two deletes and passed over by the second. Audit events stay: they
-- keep the message's id as a record (migration 018).
-- name: MessageExpireDelete :one
WITH doomed AS (
    SELECT m.tenant_id, m.id
    FROM messages m
    WHERE m.id = ANY(@ids::bigint[])
      AND NOT EXISTS (SELECT FROM deliveries d WHERE d.message_id = m.id)
      AND NOT EXISTS (SELECT FROM idempotency_keys k
                      WHERE k.tenant_id = m.tenant_id AND k.message_id = m.id AND k.expires_at > now())
), keys AS (
    DELETE FROM message_keys k USING doomed WHERE k.message_id = doomed.id
), idempotency AS (
    DELETE FROM idempotency_keys k USING doomed WHERE k.tenant_id = doomed.tenant_id AND k.message_id = doomed.id
), kept_against AS (
    DELETE FROM blocked_copies b USING doomed WHERE b.original_message_id = doomed.id
    RETURNING b.id
), released_as AS (
    DELETE FROM blocked_copies b USING doomed WHERE b.released_message_id = doomed.id
    RETURNING b.id
), gone AS (
    DELETE FROM messages m USING doomed WHERE m.id = doomed.id
    RETURNING m.id
)
SELECT (SELECT count(*) FROM gone) AS messages,
       (SELECT count(*) FROM (SELECT id FROM kept_against UNION SELECT id FROM released_as) c) AS blocked_copies;

-- MessageIDsStored says which of some messages are still stored, for the
-- rows of the audit log: an event outlives the message it names
-- (RETENTION_MESSAGES is shorter than RETENTION_AUDIT_EVENTS). A query of
-- its own, along messages_pkey, rather than a join in the list query, whose
-- planning a join to messages would double.
-- name: MessageIDsStored :many
SELECT m.id FROM messages m
WHERE m.id = ANY(@ids::bigint[])
  AND (sqlc.narg(scope_tenant_id)::bigint IS NULL OR m.tenant_id = sqlc.narg(scope_tenant_id));
