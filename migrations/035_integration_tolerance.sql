-- +goose Up
-- How far a timestamped scheme's signing time (Standard Webhooks, Stripe)
-- may be from the receiving clock, per integration: 5 minutes unless the
-- sender's own practice is stricter (stripe-go's test sets 10 seconds). At
-- most an hour, since a captured delivery stays replayable that long.
ALTER TABLE integrations
    ADD COLUMN signature_tolerance_seconds integer NOT NULL DEFAULT 300
        CHECK (signature_tolerance_seconds BETWEEN 1 AND 3600);

-- +goose Down
ALTER TABLE integrations DROP COLUMN signature_tolerance_seconds;
