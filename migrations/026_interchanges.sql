-- +goose Up
-- X12 and EDIFACT interchanges received, one row per standard, sender,
-- receiver and control number in an environment: the unique index decides
-- which of simultaneous copies of an interchange is the first, and the row
-- keeps the hash of its segments and the answer its messages got, which a
-- copy received within INTERCHANGE_WINDOW replays. The next interchange
-- of that control number after the window takes the row over.
CREATE TABLE interchanges (
    id             bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    tenant_id      bigint NOT NULL,
    environment_id bigint NOT NULL,
    standard       text NOT NULL CHECK (standard IN ('x12', 'edifact')),
    sender         text NOT NULL,
    receiver       text NOT NULL,
    control_number text NOT NULL,
    content_hash   bytea NOT NULL,
    -- {"messages": [...]}, the receipts of the interchange's messages as
    -- first answered; NULL only inside the transaction that claims the row.
    response_body  json,
    received_at    timestamptz NOT NULL DEFAULT now(),
    FOREIGN KEY (tenant_id, environment_id) REFERENCES environments (tenant_id, id)
);
CREATE UNIQUE INDEX interchanges_control_number
    ON interchanges (tenant_id, environment_id, standard, sender, receiver, control_number);

-- +goose Down
DROP TABLE interchanges;
