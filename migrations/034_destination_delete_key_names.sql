-- +goose Up
-- A destination can be deleted. Its row stays, marked deleted_at, so that
-- the deliveries made to it keep their history (where they went, every
-- attempt); a deleted destination takes no new delivery, runs no queue and
-- is listed nowhere but in that history. The deliveries it still owed,
-- pending or failed, are cancelled: status 'cancelled' says they will not
-- be made, and no worker or retry makes them.
ALTER TABLE destinations ADD COLUMN deleted_at timestamptz;

ALTER TABLE deliveries DROP CONSTRAINT deliveries_status_check;
ALTER TABLE deliveries ADD CONSTRAINT deliveries_status_check
    CHECK (status IN ('pending', 'delivered', 'failed', 'cancelled')) NOT VALID;
ALTER TABLE deliveries VALIDATE CONSTRAINT deliveries_status_check;

-- An API key has a name, so that two live keys of an environment can be
-- told apart; the keys made before names get their environment and the day
-- they were made. last_used_at is when the key last authenticated a
-- request, to the minute: it is written at most once a minute per key
-- (package sender), never per request.
ALTER TABLE api_keys
    ADD COLUMN name         text,
    ADD COLUMN last_used_at timestamptz;
UPDATE api_keys k SET name = e.slug || ' key of ' || to_char(k.created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD')
FROM environments e WHERE e.tenant_id = k.tenant_id AND e.id = k.environment_id;
ALTER TABLE api_keys
    ALTER COLUMN name SET NOT NULL,
    ADD CONSTRAINT api_keys_name_length CHECK (length(name) BETWEEN 1 AND 100);

-- +goose Down
ALTER TABLE api_keys DROP CONSTRAINT api_keys_name_length, DROP COLUMN last_used_at, DROP COLUMN name;
UPDATE deliveries SET status = 'failed' WHERE status = 'cancelled';
ALTER TABLE deliveries DROP CONSTRAINT deliveries_status_check;
ALTER TABLE deliveries ADD CONSTRAINT deliveries_status_check CHECK (status IN ('pending', 'delivered', 'failed'));
ALTER TABLE destinations DROP COLUMN deleted_at;
