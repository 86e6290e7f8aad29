-- +goose Up
-- A kept copy with changed content waits for an admin's decision: release
-- it as a message of its own (released_*, migration 003), or dismiss it as
-- reviewed, a duplicate after all. A dismissal records who and why, as a
-- release does; dismissed_by is the user's id as in the audit actor, without
-- a foreign key, so that the record outlives the account. A copy is decided
-- once: released or dismissed, never both.
ALTER TABLE blocked_copies
    ADD COLUMN dismissed_at   timestamptz,
    ADD COLUMN dismissed_by   bigint,
    ADD COLUMN dismiss_reason text CHECK (length(dismiss_reason) BETWEEN 1 AND 1000),
    ADD CONSTRAINT blocked_copies_dismiss_all_or_nothing CHECK (
        (dismissed_at IS NULL) = (dismissed_by IS NULL) AND (dismissed_by IS NULL) = (dismiss_reason IS NULL)
    ),
    ADD CONSTRAINT blocked_copies_decided_once CHECK (released_message_id IS NULL OR dismissed_at IS NULL);

-- The review state the queue filters on, kept by the database from the two
-- decisions, so that no writer can let it disagree with them.
ALTER TABLE blocked_copies
    ADD COLUMN review_state text NOT NULL GENERATED ALWAYS AS (
        CASE WHEN released_message_id IS NOT NULL THEN 'released'
             WHEN dismissed_at IS NOT NULL THEN 'dismissed'
             ELSE 'open' END
    ) STORED;

-- The review queue, newest first, of a tenant (tenant-scoped users and a
-- global user's tenant filter) or of all tenants; and the navigation's
-- count of open copies, which reads at most a hundred entries of either.
CREATE INDEX blocked_copies_tenant_review ON blocked_copies (tenant_id, review_state, received_at DESC, id DESC);
CREATE INDEX blocked_copies_review ON blocked_copies (review_state, received_at DESC, id DESC);

-- +goose Down
DROP INDEX blocked_copies_review;
DROP INDEX blocked_copies_tenant_review;
ALTER TABLE blocked_copies
    DROP COLUMN review_state,
    DROP CONSTRAINT blocked_copies_decided_once,
    DROP CONSTRAINT blocked_copies_dismiss_all_or_nothing,
    DROP COLUMN dismiss_reason,
    DROP COLUMN dismissed_by,
    DROP COLUMN dismissed_at;
