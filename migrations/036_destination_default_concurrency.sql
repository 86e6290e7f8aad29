-- +goose Up
-- A new destination runs 8 deliveries at once unless it says otherwise:
-- at 4, a destination that answers at once fell behind a busy intake on
-- the same machine, and at 8 it keeps up (docs/performance.md,
-- "Delivery"). Destinations made before keep the limit they have.
ALTER TABLE destinations ALTER COLUMN max_concurrency SET DEFAULT 8;

-- +goose Down
ALTER TABLE destinations ALTER COLUMN max_concurrency SET DEFAULT 4;
