-- +goose Up
-- The destinations page shows each destination's queue: how many
-- deliveries are pending, since when, and how many were made in the last
-- minute. The pending index gains created_at, so that the oldest pending
-- delivery of a destination is the first entry of its range, as the
-- workers' probe for any pending one still is; the delivered one holds
-- every delivery made, by destination and time, so that the last minute's
-- are one short range however many were made before.
DROP INDEX deliveries_destination_pending;
CREATE INDEX deliveries_destination_pending ON deliveries (destination_id, created_at) WHERE status = 'pending';
CREATE INDEX deliveries_destination_delivered ON deliveries (destination_id, delivered_at) WHERE delivered_at IS NOT NULL;

-- +goose Down
DROP INDEX deliveries_destination_delivered;
DROP INDEX deliveries_destination_pending;
CREATE INDEX deliveries_destination_pending ON deliveries (destination_id) WHERE status = 'pending';
