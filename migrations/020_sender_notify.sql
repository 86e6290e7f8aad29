-- +goose Up
-- Every edihub serve keeps the lookup of an API key (the key and its
-- tenant's message types) for a few seconds (API_KEY_CACHE_TTL). These
-- triggers tell every process listening on the channel edihub_senders that
-- a tenant's keys or types changed, whoever changed them (the admin, the
-- CLI, another replica, SQL by hand), so that each forgets that tenant's
-- lookups as soon as the change commits: NOTIFY is delivered at commit, and
-- not at all if the transaction rolls back. The payload is the tenant's id;
-- an empty payload (TRUNCATE) means every tenant. A process that was not
-- listening when a change committed forgets everything when it listens
-- again, and its entries expire on their own meanwhile.
--
-- Environments and tenants need no trigger: the lookup does not read them,
-- and neither can be deleted while a key or type refers to it.

-- +goose StatementBegin
CREATE FUNCTION notify_sender_changed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_LEVEL = 'STATEMENT' THEN
        PERFORM pg_notify('edihub_senders', '');
    ELSIF TG_OP = 'DELETE' THEN
        PERFORM pg_notify('edihub_senders', OLD.tenant_id::text);
    ELSE
        PERFORM pg_notify('edihub_senders', NEW.tenant_id::text);
        IF TG_OP = 'UPDATE' AND OLD.tenant_id <> NEW.tenant_id THEN
            PERFORM pg_notify('edihub_senders', OLD.tenant_id::text);
        END IF;
    END IF;
    RETURN NULL;
END
$$;
-- +goose StatementEnd

-- A new key needs no notice: keys that are not found are not cached. A new
-- type does: a cached lookup would not list it.
CREATE TRIGGER api_keys_notify_sender_changed AFTER UPDATE OR DELETE ON api_keys
    FOR EACH ROW EXECUTE FUNCTION notify_sender_changed();
CREATE TRIGGER api_keys_notify_sender_truncated AFTER TRUNCATE ON api_keys
    FOR EACH STATEMENT EXECUTE FUNCTION notify_sender_changed();
CREATE TRIGGER message_types_notify_sender_changed AFTER INSERT OR UPDATE OR DELETE ON message_types
    FOR EACH ROW EXECUTE FUNCTION notify_sender_changed();
CREATE TRIGGER message_types_notify_sender_truncated AFTER TRUNCATE ON message_types
    FOR EACH STATEMENT EXECUTE FUNCTION notify_sender_changed();

-- +goose Down
DROP TRIGGER message_types_notify_sender_truncated ON message_types;
DROP TRIGGER message_types_notify_sender_changed ON message_types;
DROP TRIGGER api_keys_notify_sender_truncated ON api_keys;
DROP TRIGGER api_keys_notify_sender_changed ON api_keys;
DROP FUNCTION notify_sender_changed();
