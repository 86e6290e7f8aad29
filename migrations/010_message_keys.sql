-- +goose NO TRANSACTION
-- +goose Up
-- What the admin's messages page searches by. It is built outside a
-- transaction, each index CONCURRENTLY, so that migrating a server with
-- millions of messages does not hold ingest up while the indexes build;
-- every statement may run again after an interruption.

-- The values of a message's business key: what its type's
-- duplicate_key_fields read when it arrived (the values its fingerprint is
-- made of), one row per distinct value, written by the statement that
-- stores the message. Strings are kept as they are, numbers in their
-- canonical form, objects and arrays as canonical JSON; missing values and
-- values longer than 255 bytes are not kept. The primary key is the
-- lookup "which messages carry 4500012345", whatever their tenant; every
-- query joins messages, whose tenant_id scopes it.
CREATE TABLE IF NOT EXISTS message_keys (
    tenant_id  bigint NOT NULL,
    message_id bigint NOT NULL,
    value      text NOT NULL CHECK (octet_length(value) BETWEEN 1 AND 255),
    PRIMARY KEY (value, message_id),
    FOREIGN KEY (tenant_id, message_id) REFERENCES messages (tenant_id, id)
);

-- A changed blocked copy keeps the values it was blocked on, so that the
-- message it may be released as is found by them too.
ALTER TABLE blocked_copies ADD COLUMN IF NOT EXISTS key_values text[];

-- The messages page lists newest first with keyset pagination on
-- (received_at, id). A page reads the first rows of the one index range
-- that fits its filters: a docnum, an environment, a tenant, or none (the
-- type's range is messages_type_received of migration 001).
CREATE INDEX CONCURRENTLY IF NOT EXISTS messages_docnum
    ON messages (docnum) WHERE docnum IS NOT NULL;
CREATE INDEX CONCURRENTLY IF NOT EXISTS messages_environment_time
    ON messages (environment_id, received_at DESC, id DESC);
CREATE INDEX CONCURRENTLY IF NOT EXISTS messages_tenant_time
    ON messages (tenant_id, received_at DESC, id DESC);
CREATE INDEX CONCURRENTLY IF NOT EXISTS messages_time
    ON messages (received_at DESC, id DESC);

-- +goose Down
DROP INDEX CONCURRENTLY IF EXISTS messages_time;
DROP INDEX CONCURRENTLY IF EXISTS messages_tenant_time;
DROP INDEX CONCURRENTLY IF EXISTS messages_environment_time;
DROP INDEX CONCURRENTLY IF EXISTS messages_docnum;
ALTER TABLE blocked_copies DROP COLUMN IF EXISTS key_values;
DROP TABLE IF EXISTS message_keys;
