-- +goose NO TRANSACTION
-- +goose Up
-- What expiry needs to delete old rows in small batches (internal/retention).
-- Built outside a transaction, each index CONCURRENTLY, so that migrating a
-- hub with millions of rows does not hold ingest up; every statement may run
-- again after an interruption.

-- An audit event outlives the message it names (RETENTION_AUDIT_EVENTS is
-- longer than RETENTION_MESSAGES by default): it keeps the message's id as a
-- record, not as a reference the message's expiry would have to wait for.
ALTER TABLE audit_events DROP CONSTRAINT IF EXISTS audit_events_tenant_id_message_id_fkey;

-- Deleting a message checks the foreign keys that point at it, and expiry
-- deletes a message's business key values and its expired idempotency keys
-- with it: without these, each of those would read the whole table once
-- per message. The other references (deliveries, blocked copies) are
-- indexed already.
CREATE INDEX CONCURRENTLY IF NOT EXISTS message_keys_message ON message_keys (message_id);
CREATE INDEX CONCURRENTLY IF NOT EXISTS idempotency_keys_message
    ON idempotency_keys (tenant_id, message_id) WHERE message_id IS NOT NULL;

-- Delivery attempts expire by their age; nothing else reads them by time.
-- (Messages expire along messages_tenant_time, blocked copies along
-- blocked_copies_review: both exist already.)
CREATE INDEX CONCURRENTLY IF NOT EXISTS delivery_attempts_started ON delivery_attempts (started_at);

-- +goose Down
DROP INDEX CONCURRENTLY IF EXISTS delivery_attempts_started;
DROP INDEX CONCURRENTLY IF EXISTS idempotency_keys_message;
DROP INDEX CONCURRENTLY IF EXISTS message_keys_message;
