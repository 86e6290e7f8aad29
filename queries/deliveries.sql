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
JOIN destinations d ON d.tenant_id = m.tenant_id AND d.environment_id = m.environment_id
WHERE cardinality(d.message_type_ids) = 0 OR m.message_type_id = ANY(d.message_type_ids)
ORDER BY m.id, d.id
ON CONFLICT (message_id, destination_id) DO NOTHING
RETURNING id, destination_id;

-- DeliveryGetForAttempt loads what one attempt sends: the message's stored
-- bytes (the received ones where they differ from the JSON payload, as for
-- IDoc-XML) with their content type, its names, and the destination's
-- address and secret.
-- name: DeliveryGetForAttempt :one
SELECT dl.id, dl.message_id, dl.destination_id, dl.status,
       COALESCE(m.received_bytes, convert_to(m.payload::text, 'UTF8'))::bytea AS body, m.content_type, m.docnum,
       mt.code AS message_type_code, d.url, d.secret, d.paused
FROM deliveries dl
JOIN messages m ON m.tenant_id = dl.tenant_id AND m.id = dl.message_id
JOIN message_types mt ON mt.tenant_id = dl.tenant_id AND mt.id = dl.message_type_id
JOIN destinations d ON d.tenant_id = dl.tenant_id AND d.id = dl.destination_id
WHERE dl.id = @id;

-- DeliveryRecordAttempt keeps one attempt and sets the delivery's status
-- from it, in one statement.
-- name: DeliveryRecordAttempt :exec
WITH attempt AS (
    INSERT INTO delivery_attempts (delivery_id, attempt, started_at, duration_ms, response_status, error, response_snippet)
    VALUES (@delivery_id, @attempt, @started_at::timestamptz, @duration_ms, sqlc.narg(response_status), @error, @response_snippet)
)
UPDATE deliveries
SET status = @status::text, attempts = attempts + 1, last_attempt_at = @started_at,
    delivered_at = CASE WHEN @status::text = 'delivered' THEN now() END
WHERE deliveries.id = @delivery_id;

-- DeliveryPendingStats reads the queue depth and the age of the oldest
-- delivery not yet made, along the deliveries_pending index.
-- name: DeliveryPendingStats :one
SELECT count(*) AS pending, COALESCE(EXTRACT(EPOCH FROM now() - min(created_at)), 0)::float8 AS oldest_seconds
FROM deliveries WHERE status = 'pending';

-- DeliveryRequeueFailed puts failed deliveries back to pending, for a new
-- round of attempts: one delivery (id) or every failed one (id NULL),
-- optionally of one destination, within the scope (NULL: every tenant). It
-- returns those it changed; a delivery that is not failed is left alone, so
-- two admins retrying at once queue it once.
-- name: DeliveryRequeueFailed :many
UPDATE deliveries SET status = 'pending'
WHERE status = 'failed'
  AND (sqlc.narg(id)::bigint IS NULL OR id = sqlc.narg(id))
  AND (sqlc.narg(destination_id)::bigint IS NULL OR destination_id = sqlc.narg(destination_id))
  AND (sqlc.narg(scope_tenant_id)::bigint IS NULL OR tenant_id = sqlc.narg(scope_tenant_id))
RETURNING id, destination_id;
