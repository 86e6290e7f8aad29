-- DeliveryPlaceTake takes a place of the delivery's destination for ttl
-- when the delivery is still pending and the destination not paused, and
-- returns the place's number; no row when every place below the
-- destination's max_concurrency is held. A place the delivery holds
-- already (its job run again after its worker process died) is taken
-- again first. SKIP LOCKED passes over the places other attempts are
-- taking at this moment, and a place one of them took since this
-- statement began is checked again once locked and passed over, so two
-- attempts never hold one place.
-- name: DeliveryPlaceTake :one
UPDATE destination_places p
SET delivery_id = @delivery_id::bigint, expires_at = now() + make_interval(secs => @ttl_seconds::float8)
WHERE (p.destination_id, p.place) = (
    SELECT free.destination_id, free.place
    FROM deliveries dl
    JOIN destinations d ON d.tenant_id = dl.tenant_id AND d.id = dl.destination_id
    JOIN destination_places free ON free.destination_id = d.id
    WHERE dl.id = @delivery_id AND dl.status = 'pending' AND NOT d.paused
      AND free.place < d.max_concurrency
      AND (free.delivery_id IS NULL OR free.expires_at <= now() OR free.delivery_id = dl.id)
    ORDER BY free.delivery_id IS DISTINCT FROM dl.id, free.place
    LIMIT 1
    FOR UPDATE OF free SKIP LOCKED
)
RETURNING p.place;

-- DeliveryPlaceReturn gives back the place a delivery's job holds without
-- making its attempt (its process is stopping); DeliveryRecord gives back
-- the place of an attempt made.
-- name: DeliveryPlaceReturn :exec
UPDATE destination_places SET delivery_id = NULL, expires_at = NULL
WHERE destination_id = @destination_id AND delivery_id = @delivery_id::bigint;
