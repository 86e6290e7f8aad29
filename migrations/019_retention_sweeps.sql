-- +goose Up
-- The outcome of the last retention sweep of each kind of data, for the
-- admin's retention page. It is kept in the database rather than in a
-- process, so that every replica's admin shows the last sweep whichever
-- replica ran it, and a restart does not forget it. One row per kind,
-- overwritten by each round.
CREATE TABLE retention_sweeps (
    kind        text PRIMARY KEY CHECK (kind ~ '^[a-z_]{1,64}$'),
    finished_at timestamptz NOT NULL,
    removed     bigint NOT NULL CHECK (removed >= 0),
    -- The error of a step that failed, cut short; '' when it succeeded.
    error       text NOT NULL DEFAULT '' CHECK (length(error) <= 500)
);

-- +goose Down
DROP TABLE retention_sweeps;
