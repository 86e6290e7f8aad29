-- +goose Up
-- A destination is a system a tenant's environment hands its messages on
-- to: an HTTP endpoint that receives each message as a signed POST.
CREATE TABLE destinations (
    id               bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    tenant_id        bigint NOT NULL,
    environment_id   bigint NOT NULL,
    url              text NOT NULL CHECK (url ~ '^https?://' AND length(url) <= 2048),
    -- The message types it takes; empty means every type. Message types are
    -- never deleted, so the ids stay meaningful.
    message_type_ids bigint[] NOT NULL DEFAULT '{}',
    -- The Standard Webhooks signing secret (whsec_ + base64). The key must
    -- be kept, not hashed: every delivery is signed with it.
    secret           text NOT NULL CHECK (secret LIKE 'whsec\_%'),
    paused           boolean NOT NULL DEFAULT false,
    -- How many deliveries to this destination one worker process runs at
    -- once.
    max_concurrency  integer NOT NULL DEFAULT 4 CHECK (max_concurrency BETWEEN 1 AND 100),
    created_at       timestamptz NOT NULL DEFAULT now(),
    updated_at       timestamptz NOT NULL DEFAULT now(),
    FOREIGN KEY (tenant_id, environment_id) REFERENCES environments (tenant_id, id),
    UNIQUE (tenant_id, id)
);
CREATE INDEX destinations_environment ON destinations (tenant_id, environment_id);

-- A delivery is one message owed to one destination. It is written in the
-- transaction that stores the message, with the River job that works it;
-- the row, not the job, is the record admins read, because River deletes
-- finished jobs after a while. The unique constraint makes "once per
-- message and destination" a property of the database.
CREATE TABLE deliveries (
    id              bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    tenant_id       bigint NOT NULL,
    environment_id  bigint NOT NULL,
    message_id      bigint NOT NULL,
    destination_id  bigint NOT NULL,
    message_type_id bigint NOT NULL,
    status          text NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'delivered', 'failed')),
    attempts        integer NOT NULL DEFAULT 0,
    created_at      timestamptz NOT NULL DEFAULT now(),
    last_attempt_at timestamptz,
    delivered_at    timestamptz,
    UNIQUE (message_id, destination_id),
    FOREIGN KEY (tenant_id, message_id) REFERENCES messages (tenant_id, id),
    FOREIGN KEY (tenant_id, destination_id) REFERENCES destinations (tenant_id, id),
    FOREIGN KEY (tenant_id, message_type_id) REFERENCES message_types (tenant_id, id)
);
CREATE INDEX deliveries_created ON deliveries (created_at DESC, id DESC);
CREATE INDEX deliveries_destination_created ON deliveries (destination_id, created_at DESC, id DESC);
-- The queue depth and the oldest pending delivery, read by the metrics.
CREATE INDEX deliveries_pending ON deliveries (created_at) WHERE status = 'pending';

-- Every HTTP attempt of a delivery, with what the destination answered.
CREATE TABLE delivery_attempts (
    id               bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    delivery_id      bigint NOT NULL REFERENCES deliveries (id),
    attempt          integer NOT NULL,
    started_at       timestamptz NOT NULL,
    duration_ms      integer NOT NULL,
    -- The answer's HTTP status; NULL when there was none (a timeout, a
    -- refused connection).
    response_status  integer,
    error            text NOT NULL DEFAULT '',
    -- The start of the answer's body, bounded, for an admin to read.
    response_snippet text NOT NULL DEFAULT ''
);
CREATE INDEX delivery_attempts_delivery ON delivery_attempts (delivery_id, id);

-- +goose Down
DROP TABLE delivery_attempts;
DROP TABLE deliveries;
DROP TABLE destinations;
