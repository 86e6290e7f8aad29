-- +goose NO TRANSACTION
-- +goose Up
-- audit_events becomes a table partitioned by month of created_at in 015,
-- so that expiry drops a month at a time and every index stays the size of
-- a month (docs/audit-events.md). The events already stored are not copied:
-- 015 attaches the existing table, renamed, as the partition of everything
-- before a cutoff. This migration prepares that table without blocking
-- ingest, outside a transaction, so that 015 has only catalog changes to
-- make under its lock:
--
-- The partitioned table's primary key must contain the partition key:
-- (created_at, id). Its index is built here, concurrently, and becomes the
-- old table's primary key in 015. Read backwards it is also the newest-first
-- order of the whole log, so it replaces audit_events_time.
CREATE UNIQUE INDEX CONCURRENTLY IF NOT EXISTS audit_events_created_at_id ON audit_events (created_at, id);

-- The action filters keep an index only for the actions that are rare:
-- blocked duplicates are nine events in ten, so a page of them is the
-- first entries of any time-ordered index (the primary key, or a tenant's
-- audit_events_tenant_time), and indexing them by action too cost more than
-- a quarter of an event's bytes. 015 puts these in place of the whole
-- indexes of 001.
CREATE INDEX CONCURRENTLY IF NOT EXISTS audit_events_rare_action_time ON audit_events (action, created_at DESC, id DESC)
    WHERE action <> 'message.duplicate_blocked';
CREATE INDEX CONCURRENTLY IF NOT EXISTS audit_events_tenant_rare_action_time
    ON audit_events (tenant_id, action, created_at DESC, id DESC) WHERE action <> 'message.duplicate_blocked';

-- The audit log's content filter ("content changed only", and shape_only)
-- asks for the blocked duplicates whose content differs from their
-- original's: a few in a hundred events, which no other index finds
-- without reading the others. Identical copies, most of them, are left
-- out, as the action indexes leave blocked duplicates out.
CREATE INDEX CONCURRENTLY IF NOT EXISTS audit_events_content_time
    ON audit_events ((details->>'content'), created_at DESC, id DESC)
    WHERE action = 'message.duplicate_blocked' AND details->>'content' <> 'identical';

-- ATTACH PARTITION scans the table, under its lock, to prove that every row
-- is inside the partition's range, unless a valid CHECK constraint proves
-- it. The constraint is added NOT VALID (a moment's lock) and validated
-- apart, which reads the table while inserts go on. The cutoff is the
-- start of the month after next, in UTC: at least a month away, so that the
-- inserts made until 015 runs are inside it; 015 reads it back from here.
-- A run that stopped half-way (this file has no transaction) is resumed.
-- +goose StatementBegin
DO $$
BEGIN
    IF NOT EXISTS (SELECT FROM pg_constraint
                   WHERE conrelid = 'audit_events'::regclass AND conname = 'audit_events_before_partitioning') THEN
        EXECUTE format('ALTER TABLE audit_events ADD CONSTRAINT audit_events_before_partitioning CHECK (created_at < %L) NOT VALID',
                       date_trunc('month', now(), 'UTC') + interval '2 months');
    END IF;
END
$$;
-- +goose StatementEnd
ALTER TABLE audit_events VALIDATE CONSTRAINT audit_events_before_partitioning;

-- +goose Down
ALTER TABLE audit_events DROP CONSTRAINT IF EXISTS audit_events_before_partitioning;
DROP INDEX CONCURRENTLY IF EXISTS audit_events_content_time;
DROP INDEX CONCURRENTLY IF EXISTS audit_events_tenant_rare_action_time;
DROP INDEX CONCURRENTLY IF EXISTS audit_events_rare_action_time;
DROP INDEX CONCURRENTLY IF EXISTS audit_events_created_at_id;
