-- +goose NO TRANSACTION
-- +goose Up
-- Indexes for the admin pages. They are built CONCURRENTLY, outside a
-- transaction, so that migrating a server with millions of audit events does
-- not block ingest (every blocked duplicate inserts an audit event) while
-- they build.

-- The login throttle counts a sign-in's recent failures by email and by
-- remote address; these partial indexes hold only failed logins, so the
-- count stays a short index range scan however many other events exist.
CREATE INDEX CONCURRENTLY IF NOT EXISTS audit_events_login_failed_email
    ON audit_events (lower(details->>'email'), created_at) WHERE action = 'user.login_failed';
CREATE INDEX CONCURRENTLY IF NOT EXISTS audit_events_login_failed_addr
    ON audit_events ((details->>'remote_addr'), created_at) WHERE action = 'user.login_failed';

-- The audit page lists newest first with keyset pagination on
-- (created_at, id). 001 covers the action and tenant+action filters; these
-- cover a tenant-scoped user's unfiltered list and the environment, message
-- type and fingerprint/key filters, each ordered so that a page is the first
-- rows of one index range rather than a sort of every match.
CREATE INDEX CONCURRENTLY IF NOT EXISTS audit_events_tenant_time
    ON audit_events (tenant_id, created_at DESC, id DESC);
CREATE INDEX CONCURRENTLY IF NOT EXISTS audit_events_environment_time
    ON audit_events (environment_id, created_at DESC, id DESC) WHERE environment_id IS NOT NULL;
CREATE INDEX CONCURRENTLY IF NOT EXISTS audit_events_message_type_time
    ON audit_events (message_type_id, created_at DESC, id DESC) WHERE message_type_id IS NOT NULL;
CREATE INDEX CONCURRENTLY IF NOT EXISTS audit_events_match_key_time
    ON audit_events (match_key, created_at DESC, id DESC) WHERE match_key IS NOT NULL;

-- +goose Down
DROP INDEX CONCURRENTLY IF EXISTS audit_events_match_key_time;
DROP INDEX CONCURRENTLY IF EXISTS audit_events_message_type_time;
DROP INDEX CONCURRENTLY IF EXISTS audit_events_environment_time;
DROP INDEX CONCURRENTLY IF EXISTS audit_events_tenant_time;
DROP INDEX CONCURRENTLY IF EXISTS audit_events_login_failed_addr;
DROP INDEX CONCURRENTLY IF EXISTS audit_events_login_failed_email;
