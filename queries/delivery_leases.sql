-- DeliveryLeaseLock makes one attempt of a destination at a time count its
-- leases and take one, to the end of the transaction, so that two worker
-- processes cannot both take the last place. It finds the destination from
-- the delivery, so that it can go in the round trip that loads the
-- delivery. Key space 3 is the destinations' (1 and 2 are sign-ins'); an id
-- past the int range would fail the cast rather than share a lock.
-- name: DeliveryLeaseLock :exec
SELECT pg_advisory_xact_lock(3, dl.destination_id::int) FROM deliveries dl WHERE dl.id = @delivery_id;

-- DeliveryLeaseTake takes a place of the delivery's destination for ttl
-- when the delivery is still pending, the destination not paused, and
-- fewer than its max_concurrency leases are live, and returns the
-- delivery's id; it returns no row otherwise. Run it after
-- DeliveryLeaseLock, in its transaction, as a statement of its own: under
-- READ COMMITTED it then counts the leases committed by the attempts that
-- held the lock before.
-- name: DeliveryLeaseTake :one
INSERT INTO delivery_leases (delivery_id, destination_id, expires_at)
SELECT dl.id, d.id, now() + make_interval(secs => @ttl_seconds::float8)
FROM deliveries dl
JOIN destinations d ON d.tenant_id = dl.tenant_id AND d.id = dl.destination_id
WHERE dl.id = @delivery_id AND dl.status = 'pending' AND NOT d.paused
  AND (SELECT count(*) FROM delivery_leases l
       WHERE l.destination_id = d.id AND l.expires_at > now() AND l.delivery_id <> dl.id) < d.max_concurrency
ON CONFLICT (delivery_id) DO UPDATE SET expires_at = excluded.expires_at
RETURNING delivery_id;

-- DeliveryLeaseReturn gives a delivery's place back, and drops the expired
-- leases of its destination, left by worker processes that died.
-- name: DeliveryLeaseReturn :exec
DELETE FROM delivery_leases
WHERE destination_id = @destination_id AND (delivery_id = @delivery_id OR expires_at <= now());
