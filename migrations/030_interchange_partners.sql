-- +goose Up
-- The trading partners that send interchanges, one row per standard,
-- sender and receiver in an environment (as interchanges scopes control
-- numbers), and the control numbers they skipped. Senders number their
-- interchanges in sequence per receiver, so a number between two received
-- ones that has not arrived is an interchange that may be lost. Both are
-- written in the interchange's own transaction, under the partner row's
-- lock, so that simultaneous interchanges of one pair see each other's
-- numbers in turn and never lose or invent a gap.
CREATE TABLE interchange_partners (
    id                  bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    tenant_id           bigint NOT NULL,
    environment_id      bigint NOT NULL,
    standard            text NOT NULL CHECK (standard IN ('x12', 'edifact')),
    sender              text NOT NULL,
    receiver            text NOT NULL,
    -- The control number of the latest interchange, as it was written.
    last_control_number text NOT NULL,
    last_seen           timestamptz NOT NULL,
    -- The first and the highest numeric control number of the partner's
    -- current run; NULL while none was a number (EDIFACT's may be
    -- alphanumeric).
    run_start           bigint,
    highest             bigint,
    -- The latest jump too long to list its numbers as gaps (more than
    -- partner.MaxGapsPerJump), taken as the partner renumbering.
    jump_from           bigint,
    jump_to             bigint,
    jumped_at           timestamptz,
    FOREIGN KEY (tenant_id, environment_id) REFERENCES environments (tenant_id, id)
);
CREATE UNIQUE INDEX interchange_partners_pair
    ON interchange_partners (tenant_id, environment_id, standard, sender, receiver);
-- The partners page, newest first, of every tenant or of one.
CREATE INDEX interchange_partners_last_seen ON interchange_partners (last_seen, id);
CREATE INDEX interchange_partners_tenant_last_seen ON interchange_partners (tenant_id, last_seen, id);

CREATE TABLE interchange_gaps (
    partner_id     bigint NOT NULL REFERENCES interchange_partners ON DELETE CASCADE,
    control_number bigint NOT NULL,
    -- When a later number arrived and showed this one missing.
    missing_since  timestamptz NOT NULL,
    PRIMARY KEY (partner_id, control_number)
);
-- The interchange.gap rule reads the gaps missing longer than
-- INTERCHANGE_GAP_AFTER.
CREATE INDEX interchange_gaps_missing_since ON interchange_gaps (missing_since);

-- +goose Down
DROP TABLE interchange_gaps;
DROP TABLE interchange_partners;
