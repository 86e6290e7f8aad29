-- +goose Up
-- The whole data model of edihub. Every row below a tenant carries tenant_id,
-- and composite foreign keys make it impossible for a row to point at another
-- tenant's environment, message type or integration.

CREATE TABLE tenants (
    id         bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    slug       text NOT NULL UNIQUE CHECK (slug ~ '^[a-z0-9][a-z0-9-]{0,62}$'),
    name       text NOT NULL CHECK (length(name) BETWEEN 1 AND 200),
    created_at timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE environments (
    id         bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    tenant_id  bigint NOT NULL REFERENCES tenants (id),
    slug       text NOT NULL CHECK (slug ~ '^[a-z0-9][a-z0-9-]{0,62}$'),
    created_at timestamptz NOT NULL DEFAULT now(),
    UNIQUE (tenant_id, slug),
    UNIQUE (tenant_id, id)
);

-- Only the SHA-256 of an API key is stored; the key itself is shown once.
CREATE TABLE api_keys (
    id             bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    tenant_id      bigint NOT NULL,
    environment_id bigint NOT NULL,
    key_hash       bytea NOT NULL UNIQUE CHECK (length(key_hash) = 32),
    key_prefix     text NOT NULL,
    created_at     timestamptz NOT NULL DEFAULT now(),
    revoked_at     timestamptz,
    FOREIGN KEY (tenant_id, environment_id) REFERENCES environments (tenant_id, id)
);

CREATE TABLE message_types (
    id                     bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    tenant_id              bigint NOT NULL REFERENCES tenants (id),
    code                   text NOT NULL CHECK (code ~ '^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$'),
    duplicate_key_fields   jsonb NOT NULL DEFAULT '[]'
                           CHECK (jsonb_typeof(duplicate_key_fields) = 'array'),
    -- NULL means the default window of 168 hours.
    duplicate_window_hours integer CHECK (duplicate_window_hours BETWEEN 1 AND 87600),
    -- Bumped on every change so that an editor saving a stale form is refused.
    version                integer NOT NULL DEFAULT 1,
    created_at             timestamptz NOT NULL DEFAULT now(),
    updated_at             timestamptz NOT NULL DEFAULT now(),
    UNIQUE (tenant_id, code),
    UNIQUE (tenant_id, id)
);

-- An integration's secret must stay readable to verify HMAC signatures, so it
-- cannot be hashed; it is never rendered or logged.
CREATE TABLE integrations (
    id              uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    tenant_id       bigint NOT NULL,
    environment_id  bigint NOT NULL,
    message_type_id bigint NOT NULL,
    scheme          text NOT NULL
                    CHECK (scheme IN ('standard-webhooks', 'github', 'stripe', 'shopify', 'bearer')),
    secret          text NOT NULL,
    created_at      timestamptz NOT NULL DEFAULT now(),
    FOREIGN KEY (tenant_id, environment_id) REFERENCES environments (tenant_id, id),
    FOREIGN KEY (tenant_id, message_type_id) REFERENCES message_types (tenant_id, id)
);

CREATE TABLE messages (
    id                   bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    tenant_id            bigint NOT NULL,
    environment_id       bigint NOT NULL,
    message_type_id      bigint NOT NULL,
    docnum               text CHECK (length(docnum) BETWEEN 1 AND 255),
    -- The json type (not jsonb) keeps the payload exactly as received.
    payload              json NOT NULL,
    -- SHA-256 of the RFC 8785 canonical payload: equal hashes mean equal content.
    content_hash         bytea NOT NULL CHECK (length(content_hash) = 32),
    -- computed_fingerprint is the message's fingerprint as computed when it
    -- arrived and never changes. fingerprint is the claim the unique index
    -- below arbitrates: it equals computed_fingerprint while this message is
    -- the one retransmissions match, and becomes NULL when a newer message
    -- takes the claim over after the window, or when the message was stored
    -- under an Idempotency-Key (which replaces fingerprint checks).
    computed_fingerprint text CHECK (computed_fingerprint ~ '^[0-9a-f]{64}$'),
    fingerprint          text CHECK (fingerprint = computed_fingerprint),
    source_endpoint      text NOT NULL CHECK (source_endpoint IN ('receive-message', 'webhook')),
    integration_id       uuid REFERENCES integrations (id),
    idempotency_key      text,
    remote_addr          text NOT NULL DEFAULT '',
    received_at          timestamptz NOT NULL DEFAULT now(),
    FOREIGN KEY (tenant_id, environment_id) REFERENCES environments (tenant_id, id),
    FOREIGN KEY (tenant_id, message_type_id) REFERENCES message_types (tenant_id, id),
    UNIQUE (tenant_id, id)
);

CREATE UNIQUE INDEX uq_messages_fingerprint ON messages (tenant_id, environment_id, fingerprint) WHERE fingerprint IS NOT NULL;
CREATE INDEX messages_type_received ON messages (tenant_id, message_type_id, received_at DESC, id DESC);

-- A client's Idempotency-Key and the response it got. scope is '' for keys
-- sent to receive-message and the integration id for webhook delivery ids, so
-- two integrations' delivery ids never collide.
CREATE TABLE idempotency_keys (
    tenant_id       bigint NOT NULL,
    environment_id  bigint NOT NULL,
    scope           text NOT NULL,
    key             text NOT NULL CHECK (key ~ '^[\x20-\x7e]{1,255}$'),
    request_hash    bytea NOT NULL CHECK (length(request_hash) = 32),
    message_id      bigint,
    -- The first answer's body, replayed byte for byte (json, not jsonb,
    -- keeps the bytes). NULL only inside the transaction that claimed the key.
    response_body   json,
    created_at      timestamptz NOT NULL DEFAULT now(),
    expires_at      timestamptz NOT NULL,
    PRIMARY KEY (tenant_id, environment_id, scope, key),
    FOREIGN KEY (tenant_id, environment_id) REFERENCES environments (tenant_id, id),
    FOREIGN KEY (tenant_id, message_id) REFERENCES messages (tenant_id, id)
);
CREATE INDEX idempotency_keys_expires ON idempotency_keys (expires_at);

CREATE TABLE users (
    id            bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    email         text NOT NULL CHECK (email ~ '^[^@\s]+@[^@\s]+$' AND length(email) <= 254),
    password_hash text NOT NULL,
    role          text NOT NULL CHECK (role IN ('admin', 'viewer')),
    -- NULL means a global user who sees every tenant.
    tenant_id     bigint REFERENCES tenants (id),
    created_at    timestamptz NOT NULL DEFAULT now()
);
CREATE UNIQUE INDEX users_email ON users (lower(email));

-- Server-side admin sessions, in the shape the session library expects.
CREATE TABLE sessions (
    token  text PRIMARY KEY,
    data   bytea NOT NULL,
    expiry timestamptz NOT NULL
);
CREATE INDEX sessions_expiry ON sessions (expiry);

-- Append-only record of what happened. tenant_id is NULL only for events
-- outside any tenant (a global user created, say).
CREATE TABLE audit_events (
    id              bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    tenant_id       bigint REFERENCES tenants (id),
    environment_id  bigint,
    message_type_id bigint,
    message_id      bigint,
    action          text NOT NULL CHECK (action ~ '^[a-z_]+(\.[a-z_]+)+$'),
    actor           text NOT NULL,
    -- The fingerprint or idempotency key a duplicate was matched on, kept in
    -- a column so the admin can filter on it through an index.
    match_key       text,
    details         jsonb NOT NULL DEFAULT '{}' CHECK (jsonb_typeof(details) = 'object'),
    created_at      timestamptz NOT NULL DEFAULT now(),
    FOREIGN KEY (tenant_id, environment_id) REFERENCES environments (tenant_id, id),
    FOREIGN KEY (tenant_id, message_type_id) REFERENCES message_types (tenant_id, id),
    FOREIGN KEY (tenant_id, message_id) REFERENCES messages (tenant_id, id)
);
-- The audit page lists newest first with keyset pagination on (created_at, id),
-- scoped by tenant and usually filtered by action.
CREATE INDEX audit_events_tenant_action_time ON audit_events (tenant_id, action, created_at DESC, id DESC);
CREATE INDEX audit_events_action_time ON audit_events (action, created_at DESC, id DESC);
CREATE INDEX audit_events_time ON audit_events (created_at DESC, id DESC);
CREATE INDEX audit_events_message ON audit_events (message_id) WHERE message_id IS NOT NULL;
CREATE INDEX audit_events_match_key ON audit_events (tenant_id, match_key) WHERE match_key IS NOT NULL;

-- +goose StatementBegin
CREATE FUNCTION audit_events_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    RAISE EXCEPTION 'audit_events is append-only';
END;
$$;
-- +goose StatementEnd
CREATE TRIGGER audit_events_append_only BEFORE UPDATE OR DELETE ON audit_events
    FOR EACH ROW EXECUTE FUNCTION audit_events_append_only();

-- +goose Down
DROP TABLE audit_events, sessions, users, idempotency_keys, messages, integrations,
    message_types, api_keys, environments, tenants;
DROP FUNCTION audit_events_append_only();
