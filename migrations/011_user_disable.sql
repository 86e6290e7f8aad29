-- +goose Up
-- A user can be disabled, and every session of a user can be ended at once.
-- Sessions are rows of the session library, keyed by token and holding
-- encoded data, so they cannot be found by user; instead each session
-- remembers the user's session_epoch at sign-in, and a session whose epoch
-- is no longer the user's is over. Disabling a user and setting a new
-- password move the epoch on. Both columns are added without a table
-- rewrite (a NULL column and a constant default).
ALTER TABLE users ADD COLUMN disabled_at timestamptz;
ALTER TABLE users ADD COLUMN session_epoch integer NOT NULL DEFAULT 0;

-- +goose Down
ALTER TABLE users DROP COLUMN session_epoch;
ALTER TABLE users DROP COLUMN disabled_at;
