-- +goose Up
-- The delivery workers run a destination's queue only while it has pending
-- deliveries, so that idle destinations cost nothing; every few seconds
-- they ask which destinations have any, one probe of this index each, which
-- holds only the pending deliveries however many were delivered before.
CREATE INDEX deliveries_destination_pending ON deliveries (destination_id) WHERE status = 'pending';

-- +goose Down
DROP INDEX deliveries_destination_pending;
