-- DeliveryCreateForMessages writes one delivery for each of the messages
-- and each destination of its tenant and environment that takes its type,
-- and returns the new ones. A delivery that already exists is left alone,
-- so calling it twice for a message creates nothing the second time. Each
-- message is looked up on its own, by primary key: OFFSET 0 keeps the
-- lookup a subquery run once per id, which a generic plan made while
-- messages was empty cannot turn into a scan of the whole table, as it did
-- with "m.id = ANY(ids)" or a plain join of the ids.
-- name: DeliveryCreateForMessages :many
INSERT INTO deliveries (tenant_id, environment_id, message_id, destination_id, message_type_id)
SELECT m.tenant_id, m.environment_id, m.id, d.id, m.message_type_id
FROM unnest(@message_ids::bigint[]) AS ids (id)
CROSS JOIN LATERAL (
    SELECT m.tenant_id, m.environment_id, m.id, m.message_type_id FROM messages m WHERE m.id = ids.id OFFSET 0
) m
JOIN destinations d ON d.tenant_id = m.tenant_id AND d.environment_id = m.environment_id AND d.deleted_at IS NULL
WHERE cardinality(d.message_type_ids) = 0 OR m.message_type_id = ANY(d.message_type_ids)
ORDER BY m.id, d.id
ON CONFLICT (message_id, destination_id) DO NOTHING
RETURNING id, destination_id;

-- DeliveryCreateForStored is DeliveryCreateForMessages for the messages
-- that this transaction has just stored by fingerprint with
-- MessageStoreOrBlock or MessageStoreOrBlockAll (MessageStoreNew writes
-- those of the messages it stores itself), named by their
-- claims (tenant, environment and fingerprint, one element of each array
-- per message) rather than their ids, so that it can travel in the round
-- trip of the statement that stores them (db.Batch), before their ids are
-- known. A claim's holder counts only when this transaction wrote it (its
-- xmin; ingest stores no message in a subtransaction): an earlier holder,
-- such as a duplicate's original, gets no delivery here. The holder is
-- looked up by the whole key of uq_messages_fingerprint, and its
-- destinations by its environment, each in a subquery kept apart by OFFSET
-- 0, as MessageStoreOrBlockAll does, so that every plan probes an index per
-- message. A claim named twice (copies of one message) names one holder,
-- which gets each delivery once.
-- name: DeliveryCreateForStored :many
INSERT INTO deliveries (tenant_id, environment_id, message_id, destination_id, message_type_id)
SELECT m.tenant_id, m.environment_id, m.id, d.id, m.message_type_id
FROM (
    SELECT DISTINCT (@tenant_ids::bigint[])[u.ord] AS tenant_id, (@environment_ids::bigint[])[u.ord] AS environment_id,
                    (@fingerprints::text[])[u.ord] AS fingerprint
    FROM generate_subscripts(@fingerprints::text[], 1) AS u (ord)
) c
CROSS JOIN LATERAL (
    SELECT m.tenant_id, m.environment_id, m.id, m.message_type_id FROM messages m
    WHERE m.tenant_id = c.tenant_id AND m.environment_id = c.environment_id AND m.fingerprint = c.fingerprint
      AND m.xmin = pg_current_xact_id_if_assigned()::xid
    OFFSET 0
) m
CROSS JOIN LATERAL (
    SELECT d.id FROM destinations d
    WHERE d.tenant_id = m.tenant_id AND d.environment_id = m.environment_id AND d.deleted_at IS NULL
      AND (cardinality(d.message_type_ids) = 0 OR m.message_type_id = ANY(d.message_type_ids))
    OFFSET 0
) d
ORDER BY m.id, d.id
ON CONFLICT (message_id, destination_id) DO NOTHING
RETURNING id, destination_id, message_id;

-- DeliveryGetForAttempt loads what one attempt sends (the message's
-- stored bytes, the received ones where they differ from the JSON payload,
-- as for IDoc-XML, with their content type, its names, and the
-- destination's address and secret) and takes a place of the destination
-- for ttl when the delivery is still pending and the destination not
-- paused, in one statement: place is the place's number, or -1 when every
-- place below the destination's max_concurrency is held. A place the
-- delivery holds already (its job run again after its worker process
-- died) is taken again first. SKIP LOCKED passes over the places other
-- attempts are taking at this moment, and a place one of them took since
-- this statement began is checked again once locked and passed over, so
-- two attempts never hold one place.
-- name: DeliveryGetForAttempt :one
WITH taken AS (
    UPDATE destination_places p
    SET delivery_id = @id::bigint, expires_at = now() + make_interval(secs => @ttl_seconds::float8)
    WHERE (p.destination_id, p.place) = (
        SELECT free.destination_id, free.place
        FROM deliveries want
        JOIN destinations wd ON wd.tenant_id = want.tenant_id AND wd.id = want.destination_id
        JOIN destination_places free ON free.destination_id = wd.id
        WHERE want.id = @id::bigint AND want.status = 'pending' AND NOT wd.paused
          AND free.place < wd.max_concurrency
          AND (free.delivery_id IS NULL OR free.expires_at <= now() OR free.delivery_id = want.id)
        ORDER BY free.delivery_id IS DISTINCT FROM want.id, free.place
        LIMIT 1
        FOR UPDATE OF free SKIP LOCKED
    )
    RETURNING p.place
)
SELECT dl.id, dl.message_id, dl.destination_id, dl.status,
       m.body, m.content_type, m.docnum, mt.code AS message_type_code, d.url, d.secret, d.paused,
       COALESCE((SELECT place FROM taken), -1)::integer AS place
FROM deliveries dl
-- The delivery's message, type and destination are each looked up by its
-- primary key alone, the delivery's foreign keys holding them to its
-- tenant, in a LATERAL subquery with a LIMIT, which is planned apart for
-- the one row of dl. As joins, or with the tenant in the condition, a plan
-- made while the tables were small may hash them or walk an index by
-- tenant, reading all of the tenant's messages for every attempt
-- (internal/db's plan test).
CROSS JOIN LATERAL (
    SELECT COALESCE(m.received_bytes, convert_to(m.payload::text, 'UTF8'))::bytea AS body, m.content_type, m.docnum
    FROM messages m WHERE m.id = dl.message_id LIMIT 1
) m
CROSS JOIN LATERAL (SELECT mt.code FROM message_types mt WHERE mt.id = dl.message_type_id LIMIT 1) mt
CROSS JOIN LATERAL (SELECT d.url, d.secret, d.paused FROM destinations d WHERE d.id = dl.destination_id LIMIT 1) d
WHERE dl.id = @id::bigint;

-- DeliveryRecord keeps one attempt of a delivery and what follows from it,
-- in one statement:
--   - the attempt, numbered after the delivery's earlier ones (an admin's
--     retry starts a new job, whose attempts River counts from one again),
--     and the delivery's status;
--   - whether its destination is failing, for the alert rules: a failed
--     attempt starts failing_since when it is not set, one that delivered
--     clears it, written only when that changes, so that the attempts of
--     one destination, most alike, do not queue on its row;
--   - the place the attempt held: handed on to next_delivery_id (a job of
--     the same process waiting for a place of this destination, already
--     loaded) for ttl when that delivery is still pending, the destination
--     not paused and the place within its limit, else given back.
-- It returns whether the place was handed on; no row when the attempt no
-- longer held it (it outlived its ttl and another attempt took it).
-- name: DeliveryRecord :one
WITH attempt AS (
    INSERT INTO delivery_attempts (delivery_id, attempt, started_at, duration_ms, response_status, error, response_snippet)
    SELECT id, attempts + 1, @started_at::timestamptz, @duration_ms, sqlc.narg(response_status), @error, @response_snippet
    FROM deliveries WHERE id = @delivery_id
), recorded AS (
    -- A delivery cancelled during its attempt (its destination deleted)
    -- stays cancelled, unless the attempt delivered it after all.
    UPDATE deliveries
    SET status = CASE WHEN status = 'cancelled' AND @status::text <> 'delivered' THEN status ELSE @status::text END,
        attempts = attempts + 1, last_attempt_at = @started_at::timestamptz,
        delivered_at = CASE WHEN @status::text = 'delivered' THEN now() END
    WHERE deliveries.id = @delivery_id
), outcome AS (
    UPDATE destinations
    SET failing_since = CASE WHEN @delivered::boolean THEN NULL ELSE @started_at::timestamptz END
    WHERE id = @destination_id AND (failing_since IS NOT NULL) = @delivered::boolean
)
UPDATE destination_places p
SET delivery_id = CASE WHEN nx.handable AND p.place < nx.max_concurrency THEN nx.id END,
    expires_at = CASE WHEN nx.handable AND p.place < nx.max_concurrency THEN now() + make_interval(secs => @ttl_seconds::float8) END
FROM (SELECT) me
-- The next delivery and its destination are looked up by their keys, and
-- whether the place may go to it is decided from the rows found: as a
-- condition, the planner may walk the destination's pending deliveries.
LEFT JOIN LATERAL (
    SELECT nx.id, d.max_concurrency, nx.status = 'pending' AND nx.destination_id = @destination_id AND NOT d.paused AS handable
    FROM deliveries nx
    CROSS JOIN LATERAL (SELECT d.max_concurrency, d.paused FROM destinations d WHERE d.id = nx.destination_id LIMIT 1) d
    WHERE nx.id = sqlc.narg(next_delivery_id)::bigint AND nx.id <> @delivery_id::bigint
    LIMIT 1
) nx ON true
WHERE p.destination_id = @destination_id AND p.delivery_id = @delivery_id::bigint
RETURNING (p.delivery_id IS NOT NULL)::boolean AS handed_on;

-- DeliveryPendingStats reads the queue depth and the age of the oldest
-- delivery not yet made, along the deliveries_pending index.
-- name: DeliveryPendingStats :one
SELECT count(*) AS pending, COALESCE(EXTRACT(EPOCH FROM now() - min(created_at)), 0)::float8 AS oldest_seconds
FROM deliveries WHERE status = 'pending';

-- DeliveryRequeueFailed puts a batch of failed deliveries back to
-- pending, for a new round of attempts, and returns them: the failed ones
-- after after_id, in id order, that match every filter given (NULL matches
-- anything), within the scope (NULL: every tenant). Walking by id lets a
-- caller requeue any number in bounded transactions, and never twice in one
-- pass, even when a requeued delivery fails again meanwhile. The rows are
-- locked as they are read, and a delivery no longer failed when its lock is
-- granted is passed over, so two admins retrying at once queue it once.
-- name: DeliveryRequeueFailed :many
UPDATE deliveries dl SET status = 'pending'
WHERE dl.id IN (
    SELECT f.id FROM deliveries f
    WHERE f.status = 'failed' AND f.id > @after_id
      AND (sqlc.narg(scope_tenant_id)::bigint IS NULL OR f.tenant_id = sqlc.narg(scope_tenant_id))
      AND (sqlc.narg(id)::bigint IS NULL OR f.id = sqlc.narg(id))
      AND (sqlc.narg(destination_id)::bigint IS NULL OR f.destination_id = sqlc.narg(destination_id))
      AND (sqlc.narg(message_type)::text IS NULL OR EXISTS (
          SELECT FROM message_types mt WHERE mt.tenant_id = f.tenant_id AND mt.id = f.message_type_id
            AND mt.code = sqlc.narg(message_type)))
      AND (sqlc.narg(since)::timestamptz IS NULL OR f.created_at >= sqlc.narg(since))
      AND (sqlc.narg(until)::timestamptz IS NULL OR f.created_at < sqlc.narg(until))
    ORDER BY f.id
    LIMIT @batch_size
    FOR UPDATE)
RETURNING dl.id, dl.destination_id;

-- DeliveryList is a page of the admin's deliveries page, newest first,
-- keyset paginated on (created_at, id), each with its last attempt's
-- answer. Every filter is optional (NULL matches anything); the scope
-- (NULL: a global user) applies whatever they say. Run it with custom plans
-- (db.CustomPlans) so that the unused filters fold away.
-- name: DeliveryList :many
SELECT dl.id, dl.created_at, dl.status, dl.attempts, dl.last_attempt_at, dl.delivered_at,
       dl.message_id, dl.destination_id, m.docnum, mt.code AS message_type_code, d.url AS destination_url,
       t.slug AS tenant_slug, env.slug AS environment_slug,
       last.response_status AS last_response_status, coalesce(last.error, '')::text AS last_error
FROM deliveries dl
JOIN messages m ON m.tenant_id = dl.tenant_id AND m.id = dl.message_id
JOIN message_types mt ON mt.tenant_id = dl.tenant_id AND mt.id = dl.message_type_id
JOIN destinations d ON d.tenant_id = dl.tenant_id AND d.id = dl.destination_id
JOIN tenants t ON t.id = dl.tenant_id
JOIN environments env ON env.tenant_id = dl.tenant_id AND env.id = dl.environment_id
LEFT JOIN LATERAL (
    SELECT a.response_status, a.error FROM delivery_attempts a
    WHERE a.delivery_id = dl.id ORDER BY a.id DESC LIMIT 1
) last ON true
WHERE (sqlc.narg(scope_tenant_id)::bigint IS NULL OR dl.tenant_id = sqlc.narg(scope_tenant_id))
  AND (sqlc.narg(status)::text IS NULL OR dl.status = sqlc.narg(status))
  AND (sqlc.narg(destination_id)::bigint IS NULL OR dl.destination_id = sqlc.narg(destination_id))
  AND (sqlc.narg(message_type)::text IS NULL OR mt.code = sqlc.narg(message_type))
  AND (sqlc.narg(since)::timestamptz IS NULL OR dl.created_at >= sqlc.narg(since))
  AND (sqlc.narg(until)::timestamptz IS NULL OR dl.created_at < sqlc.narg(until))
  AND (sqlc.narg(before_time)::timestamptz IS NULL
       OR (dl.created_at, dl.id) < (sqlc.narg(before_time)::timestamptz, sqlc.narg(before_id)::bigint))
ORDER BY dl.created_at DESC, dl.id DESC
LIMIT @page_size;

-- DeliveryListOfMessage lists a message's deliveries, within the scope
-- (NULL: a global user).
-- name: DeliveryListOfMessage :many
SELECT dl.id, dl.created_at, dl.status, dl.attempts, dl.delivered_at, dl.destination_id, d.url AS destination_url
FROM deliveries dl
JOIN destinations d ON d.tenant_id = dl.tenant_id AND d.id = dl.destination_id
WHERE dl.message_id = @message_id
  AND (sqlc.narg(scope_tenant_id)::bigint IS NULL OR dl.tenant_id = sqlc.narg(scope_tenant_id))
ORDER BY dl.id;

-- DeliveryAttemptListOfMessage lists every attempt of a message's
-- deliveries, within the scope (NULL: a global user).
-- name: DeliveryAttemptListOfMessage :many
SELECT a.delivery_id, a.attempt, a.started_at, a.duration_ms, a.response_status, a.error, a.response_snippet
FROM delivery_attempts a
JOIN deliveries dl ON dl.id = a.delivery_id
WHERE dl.message_id = @message_id
  AND (sqlc.narg(scope_tenant_id)::bigint IS NULL OR dl.tenant_id = sqlc.narg(scope_tenant_id))
ORDER BY a.delivery_id, a.id;

-- DeliveryAttemptDeleteExpired deletes up to batch_size delivery attempts
-- started more than period_seconds ago, along delivery_attempts_started.
-- The delivery itself stays, with its status and attempt count, as long as
-- its message does.
-- name: DeliveryAttemptDeleteExpired :execrows
DELETE FROM delivery_attempts
WHERE id IN (
    SELECT a.id FROM delivery_attempts a
    WHERE a.started_at < now() - make_interval(secs => @period_seconds::float8)
    LIMIT @batch_size::int
    FOR UPDATE SKIP LOCKED
);

-- DeliveryListLagging lists the destinations, not paused, whose oldest
-- pending delivery was created at or before created_before, with how
-- many have waited that long, for the rule delivery.lagging. It reads
-- only the old end of deliveries_pending. A paused destination is left
-- out: an admin or auto-pause (whose alert says so) stopped it on purpose.
-- name: DeliveryListLagging :many
WITH lagging AS (
    SELECT dl.destination_id, min(dl.created_at)::timestamptz AS oldest, count(*) AS waiting
    FROM deliveries dl
    WHERE dl.status = 'pending' AND dl.created_at <= @created_before
    GROUP BY dl.destination_id
)
SELECT d.id, d.tenant_id, d.url, l.oldest, l.waiting, t.slug AS tenant_slug, e.slug AS environment_slug
FROM lagging l
JOIN destinations d ON d.id = l.destination_id
JOIN tenants t ON t.id = d.tenant_id
JOIN environments e ON e.tenant_id = d.tenant_id AND e.id = d.environment_id
WHERE NOT d.paused
ORDER BY d.id;

-- DeliveryBacklogOfDestinations reads, for each of the destinations, what
-- the destinations page shows of its queue: its pending deliveries,
-- counted up to pending_cap; how long the oldest of them has waited, in
-- seconds (0 for none); and the deliveries made per second over the last
-- minute, or over its last rate_cap deliveries when it made more in that
-- minute. Each is one bounded range of a partial index per destination
-- (deliveries_destination_pending, deliveries_destination_delivered),
-- whatever the table holds; each destination is looked up on its own in a
-- subquery kept apart by OFFSET 0, so that no plan scans for all of them.
-- name: DeliveryBacklogOfDestinations :many
SELECT ids.id::bigint AS destination_id, p.pending, p.oldest_seconds, r.per_second
FROM unnest(@destination_ids::bigint[]) AS ids (id)
CROSS JOIN LATERAL (
    SELECT (SELECT count(*) FROM (
                SELECT FROM deliveries dl WHERE dl.destination_id = ids.id AND dl.status = 'pending' LIMIT @pending_cap::int
            ) c) AS pending,
           COALESCE((SELECT EXTRACT(EPOCH FROM now() - dl.created_at) FROM deliveries dl
                     WHERE dl.destination_id = ids.id AND dl.status = 'pending' ORDER BY dl.created_at LIMIT 1), 0)::float8 AS oldest_seconds
    OFFSET 0
) p
CROSS JOIN LATERAL (
    SELECT (CASE WHEN count(*) < @rate_cap::int THEN count(*) / 60.0
                 ELSE count(*) / GREATEST(EXTRACT(EPOCH FROM now() - min(x.delivered_at)), 0.001) END)::float8 AS per_second
    FROM (
        SELECT dl.delivered_at FROM deliveries dl
        WHERE dl.destination_id = ids.id AND dl.delivered_at > now() - interval '1 minute'
        ORDER BY dl.delivered_at DESC LIMIT @rate_cap::int
    ) x
) r
ORDER BY ids.id;

-- DeliveryStatusOf reads a delivery's status within the scope (NULL: every
-- tenant); no row when there is no such delivery in it.
-- name: DeliveryStatusOf :one
SELECT status FROM deliveries
WHERE id = @id AND (sqlc.narg(scope_tenant_id)::bigint IS NULL OR tenant_id = sqlc.narg(scope_tenant_id)::bigint);

-- DeliveryCancelOfDestination cancels the deliveries a destination still
-- owes, pending or failed, when it is deleted, along the partial indexes
-- of either status, and counts them.
-- name: DeliveryCancelOfDestination :execrows
UPDATE deliveries SET status = 'cancelled'
WHERE destination_id = @destination_id AND status IN ('pending', 'failed');
