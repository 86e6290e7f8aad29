-- +goose Up
-- A blocked duplicate whose canonical content differs from its original's
-- (same business key, changed content: a repeat output after a correction,
-- say) is kept here, so that an admin can see what changed and, when the
-- block was a false positive, accept the copy as a message of its own.
-- Identical copies are not kept: their audit event says all there is.
-- The copy is written by the statement that blocks it (MessageStoreOrBlock),
-- in the transaction of its audit event, so an event that says "changed"
-- always has its copy.
CREATE TABLE blocked_copies (
    id                  bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    tenant_id           bigint NOT NULL,
    environment_id      bigint NOT NULL,
    message_type_id     bigint NOT NULL,
    -- The message.duplicate_blocked event that records the block; the
    -- unique constraint's index is also how an audit row finds its copy.
    audit_event_id      bigint NOT NULL UNIQUE REFERENCES audit_events (id),
    original_message_id bigint NOT NULL,
    docnum              text CHECK (length(docnum) BETWEEN 1 AND 255),
    -- The json type (not jsonb) keeps the payload exactly as received, as
    -- in messages.
    payload             json NOT NULL,
    content_hash        bytea NOT NULL CHECK (length(content_hash) = 32),
    -- Where the copy came from: endpoint, integration_id, remote_addr and
    -- the request headers that identify a sender (a fixed list kept in
    -- internal/server; never credentials, signatures or cookies).
    sender              jsonb NOT NULL CHECK (jsonb_typeof(sender) = 'object'),
    received_at         timestamptz NOT NULL DEFAULT now(),
    -- Set together, once, when an admin accepts the copy as a new message.
    -- released_by is the user's id as in the audit actor "user:<id>"; it has
    -- no foreign key, so that the record outlives the account, as the audit
    -- trail does.
    released_message_id bigint UNIQUE,
    released_at         timestamptz,
    released_by         bigint,
    release_reason      text CHECK (length(release_reason) BETWEEN 1 AND 1000),
    FOREIGN KEY (tenant_id, environment_id) REFERENCES environments (tenant_id, id),
    FOREIGN KEY (tenant_id, message_type_id) REFERENCES message_types (tenant_id, id),
    FOREIGN KEY (tenant_id, original_message_id) REFERENCES messages (tenant_id, id),
    FOREIGN KEY (tenant_id, released_message_id) REFERENCES messages (tenant_id, id),
    CONSTRAINT blocked_copies_release_all_or_nothing CHECK (
        (released_message_id IS NULL) = (released_at IS NULL)
        AND (released_at IS NULL) = (released_by IS NULL)
        AND (released_by IS NULL) = (release_reason IS NULL)
    )
);
-- The message page lists the copies blocked against a message.
CREATE INDEX blocked_copies_original ON blocked_copies (original_message_id);

-- +goose Down
DROP TABLE blocked_copies;
