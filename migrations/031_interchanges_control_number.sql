-- +goose NO TRANSACTION
-- +goose Up
-- The messages page's control_number filter finds the interchanges with one
-- control number, of any sender and receiver, within a tenant or across
-- the tenants of a global user: the unique index leads with the tenant and
-- the pair, so it cannot. Built concurrently, so that ingest goes on.
CREATE INDEX CONCURRENTLY IF NOT EXISTS interchanges_control_number_lookup
    ON interchanges (control_number, tenant_id);

-- +goose Down
DROP INDEX CONCURRENTLY IF EXISTS interchanges_control_number_lookup;
