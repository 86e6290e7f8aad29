-- +goose Up
-- An integration's secrets: one normally, several while its sender rotates,
-- each current until its optional expiry, so that deliveries signed with the
-- old secret still verify during the grace period. HMAC secrets must stay
-- readable to verify signatures, so they cannot be hashed; only webhook
-- verification reads them, and they are never rendered or logged. Bearer
-- integrations have none: their senders present API keys.
CREATE TABLE integration_secrets (
    id             bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    integration_id uuid NOT NULL REFERENCES integrations (id),
    secret         text NOT NULL CHECK (secret <> ''),
    created_at     timestamptz NOT NULL DEFAULT now(),
    -- NULL means current until a rotation gives it an expiry.
    expires_at     timestamptz
);
CREATE INDEX integration_secrets_integration ON integration_secrets (integration_id);

INSERT INTO integration_secrets (integration_id, secret, created_at)
SELECT id, secret, created_at FROM integrations WHERE secret <> '';

ALTER TABLE integrations DROP COLUMN secret;

-- No Down: going back would have to fold several current secrets of a
-- rotating integration into the one column it had, dropping all but one,
-- and a sender still signing with a dropped secret would be refused. A
-- database is taken back by restoring its backup instead.
