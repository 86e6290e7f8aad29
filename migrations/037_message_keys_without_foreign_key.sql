-- +goose Up
-- A message's key values are written by the statement that stores the
-- message, from the rows it inserted, and deleted by the statement that
-- deletes the message (MessageExpireDelete), so no key can name a message
-- that is not there. The foreign key proved that again for every key of
-- every stored message, in a check of its own that also locked the new
-- message's row: the largest of the checks a stored message costs
-- (docs/performance.md, "Batches and packets"). Every test database is
-- checked for keys without their message when its test ends
-- (internal/pgtest).
ALTER TABLE message_keys DROP CONSTRAINT IF EXISTS message_keys_tenant_id_message_id_fkey;

-- +goose Down
ALTER TABLE message_keys ADD CONSTRAINT message_keys_tenant_id_message_id_fkey
    FOREIGN KEY (tenant_id, message_id) REFERENCES messages (tenant_id, id);
