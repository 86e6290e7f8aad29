-- +goose NO TRANSACTION
-- +goose Up
-- A stored message's first business key value is kept in its own row and
-- indexed there; message_keys keeps the others. Most types have one key
-- path, and a row of message_keys with its two index entries cost
-- PostgreSQL about 3.5 µs a message more than one entry in messages
-- (docs/performance.md, "Where a batch message's PostgreSQL time goes").
-- Messages stored before keep all their values in message_keys, so a
-- search by key reads both places (MessageSearchByKey). The index is built
-- without blocking inserts, and the CHECK added NOT VALID and validated
-- while they go on; a run that stopped half-way (this file has no
-- transaction) is resumed: a concurrent build that failed leaves an
-- invalid index under its name, which IF NOT EXISTS would keep, so the
-- index is dropped and built again. The view message_key_values reads both.
ALTER TABLE messages ADD COLUMN IF NOT EXISTS first_key_value text;
ALTER TABLE messages DROP CONSTRAINT IF EXISTS messages_first_key_value_length,
    ADD CONSTRAINT messages_first_key_value_length
        CHECK (octet_length(first_key_value) BETWEEN 1 AND 255) NOT VALID;
ALTER TABLE messages VALIDATE CONSTRAINT messages_first_key_value_length;
DROP INDEX CONCURRENTLY IF EXISTS messages_first_key_value;
CREATE INDEX CONCURRENTLY messages_first_key_value ON messages (first_key_value)
    WHERE first_key_value IS NOT NULL;
-- Every business key value of every stored message, wherever it is kept.
CREATE OR REPLACE VIEW message_key_values AS
    SELECT tenant_id, id AS message_id, first_key_value AS value FROM messages WHERE first_key_value IS NOT NULL
    UNION ALL
    SELECT tenant_id, message_id, value FROM message_keys;

-- +goose Down
DROP VIEW IF EXISTS message_key_values;
INSERT INTO message_keys (tenant_id, message_id, value)
SELECT tenant_id, id, first_key_value FROM messages WHERE first_key_value IS NOT NULL
ON CONFLICT DO NOTHING;
DROP INDEX CONCURRENTLY IF EXISTS messages_first_key_value;
ALTER TABLE messages DROP COLUMN IF EXISTS first_key_value;
