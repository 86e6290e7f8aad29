-- +goose Up
-- A lease is one of a destination's max_concurrency places, held by a
-- delivery attempt while it runs in some worker process. Attempts take a
-- lease before they send and give it back when they have recorded the
-- answer, so a destination's limit holds across every worker process on the
-- database, not per process. A lease expires by itself after the longest an
-- attempt can run, so a worker process that dies mid-attempt frees its
-- place without anyone's help. destinations.max_concurrency is the number of
-- places: deliveries at once across all worker processes.
CREATE TABLE delivery_leases (
    delivery_id    bigint PRIMARY KEY,
    destination_id bigint NOT NULL,
    expires_at     timestamptz NOT NULL
);
CREATE INDEX delivery_leases_destination ON delivery_leases (destination_id, expires_at);

-- +goose Down
DROP TABLE delivery_leases;
