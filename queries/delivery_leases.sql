-- DeliveryLeaseLock makes one attempt of a destination at a time count its
-- leases and take one, to the end of the transaction, so that two worker
-- processes cannot both take the last place. Key space 3 is the
-- destinations' (1 and 2 are sign-ins'); an id past the int range would
-- fail the cast rather than share a lock.
-- name: DeliveryLeaseLock :exec
SELECT pg_advisory_xact_lock(3, d.id::int) FROM destinations d WHERE d.id = @destination_id;

-- DeliveryLeaseTake takes a place of the delivery's destination for ttl
-- when fewer than its max_concurrency leases are live, and returns the
-- delivery's id; it returns no row when every place is taken. Run it after
-- DeliveryLeaseLock, in its transaction, so that it counts the leases
-- committed by the attempts that held the lock before.
-- name: DeliveryLeaseTake :one
INSERT INTO delivery_leases (delivery_id, destination_id, expires_at)
SELECT @delivery_id, d.id, now() + make_interval(secs => @ttl_seconds::float8)
FROM destinations d
WHERE d.id = @destination_id
  AND (SELECT count(*) FROM delivery_leases l
       WHERE l.destination_id = d.id AND l.expires_at > now() AND l.delivery_id <> @delivery_id) < d.max_concurrency
ON CONFLICT (delivery_id) DO UPDATE SET expires_at = excluded.expires_at
RETURNING delivery_id;

-- DeliveryLeaseReturn gives a delivery's place back, and drops the expired
-- leases of its destination, left by worker processes that died.
-- name: DeliveryLeaseReturn :exec
DELETE FROM delivery_leases
WHERE destination_id = @destination_id AND (delivery_id = @delivery_id OR expires_at <= now());
