-- +goose NO TRANSACTION
-- +goose Up
-- The retention sweep removes interchanges past INTERCHANGE_WINDOW, oldest
-- first, a batch at a time: a range of this index. Built concurrently, so
-- that ingest goes on.
CREATE INDEX CONCURRENTLY IF NOT EXISTS interchanges_received ON interchanges (received_at);

-- +goose Down
DROP INDEX CONCURRENTLY IF EXISTS interchanges_received;
