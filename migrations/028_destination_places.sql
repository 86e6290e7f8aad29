-- +goose Up
-- A destination's places become rows of their own: max_concurrency rows per
-- destination, each free or held by one delivery attempt until it gives
-- the place back or its time runs out (a worker process that died). An
-- attempt takes a free place by locking its row with SKIP LOCKED, so two
-- worker processes can never hold one place, and the limit holds across
-- processes without an advisory lock or a count of leases; taking and
-- giving back update a row in place instead of inserting and deleting one,
-- and neither column they change is indexed, so the update stays on its
-- page (fillfactor) and leaves the indexes alone.
CREATE TABLE destination_places (
    destination_id bigint  NOT NULL REFERENCES destinations (id) ON DELETE CASCADE,
    place          integer NOT NULL,
    delivery_id    bigint,
    expires_at     timestamptz,
    PRIMARY KEY (destination_id, place)
) WITH (fillfactor = 50);

-- Every destination has a place for each of its max_concurrency, however
-- it was made or changed (the admin pages, the CLI, provisioning). Places
-- above a lowered limit stay, unused: an attempt holding one finishes.
-- +goose StatementBegin
CREATE FUNCTION destination_places_fill() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO destination_places (destination_id, place)
    SELECT NEW.id, p FROM generate_series(0, NEW.max_concurrency - 1) p
    ON CONFLICT DO NOTHING;
    RETURN NULL;
END;
$$;
-- +goose StatementEnd
CREATE TRIGGER destination_places_fill AFTER INSERT OR UPDATE OF max_concurrency ON destinations
FOR EACH ROW EXECUTE FUNCTION destination_places_fill();

INSERT INTO destination_places (destination_id, place)
SELECT d.id, p FROM destinations d, generate_series(0, d.max_concurrency - 1) p;
-- Attempts under way keep their places.
UPDATE destination_places p SET delivery_id = l.delivery_id, expires_at = l.expires_at
FROM (SELECT destination_id, delivery_id, expires_at,
             row_number() OVER (PARTITION BY destination_id ORDER BY delivery_id) - 1 AS place
      FROM delivery_leases WHERE expires_at > now()) l
WHERE p.destination_id = l.destination_id AND p.place = l.place;
DROP TABLE delivery_leases;

-- +goose Down
CREATE TABLE delivery_leases (
    delivery_id    bigint PRIMARY KEY,
    destination_id bigint NOT NULL,
    expires_at     timestamptz NOT NULL
);
CREATE INDEX delivery_leases_destination ON delivery_leases (destination_id, expires_at);
INSERT INTO delivery_leases (delivery_id, destination_id, expires_at)
SELECT DISTINCT ON (delivery_id) delivery_id, destination_id, expires_at
FROM destination_places WHERE delivery_id IS NOT NULL AND expires_at > now();
DROP TABLE destination_places;
DROP FUNCTION destination_places_fill();
