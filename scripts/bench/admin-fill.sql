-- `make bench/admin`'s data: a year of traffic, generated inside
-- PostgreSQL (psql -v messages=N -v recent=N -v audit_events=N -f
-- admin-fill.sql) into a migrated, empty database. Ten tenants (acme
-- receives four messages in ten), each with a production and a sandbox
-- environment and four message types; messages in id order as ingest
-- writes them, the last `recent` of them spread evenly over the 7 days
-- before now (dense recent traffic, which the dashboard counts), the others
-- over the 358 days before those (all of them over the year when recent is
-- 0); nine audit events in ten are blocked duplicates of one of them,
-- written minutes after their original, with the details ingest records
-- (mode, key, original, content: 85 % identical, 5 % shape only, 10 %
-- changed, whose copies are kept in blocked_copies, a fifth of them still
-- open for review); the rest are sign-ins, failed sign-ins and
-- message type changes. Every INSERT names its columns, so the fill keeps
-- working when a migration adds one or partitions a table.
\set ON_ERROR_STOP on
\timing on

INSERT INTO tenants (slug, name)
SELECT slug, initcap(slug)
FROM unnest(ARRAY['acme', 'globex', 'initech', 'umbrella', 'hooli', 'stark', 'wayne', 'wonka', 'tyrell', 'cyberdyne']) slug;

INSERT INTO environments (tenant_id, slug)
SELECT t.id, e FROM tenants t, unnest(ARRAY['production', 'sandbox']) e;

INSERT INTO message_types (tenant_id, code, duplicate_key_fields)
SELECT t.id, c.code, c.fields::jsonb
FROM tenants t, (VALUES ('ORDERS05', '["IDOC.E1EDK01.BELNR"]'), ('INVOIC02', '["IDOC.E1EDK01.BELNR"]'),
                        ('DESADV01', '[]'), ('SHOP_ORDER', '["id"]')) c (code, fields);

-- The i-th tenant, environment and type in a fixed order, so that each
-- generated row picks its own by arithmetic instead of a join.
CREATE TEMP TABLE fill_types AS
SELECT row_number() OVER (ORDER BY t.slug, e.slug, mt.code) - 1 AS n,
       dense_rank() OVER (ORDER BY t.slug) - 1 AS tenant_n, e.slug = 'sandbox' AS sandbox,
       t.id AS tenant_id, e.id AS environment_id, mt.id AS message_type_id, mt.code
FROM tenants t JOIN environments e ON e.tenant_id = t.id JOIN message_types mt ON mt.tenant_id = t.id;
CREATE UNIQUE INDEX ON fill_types (tenant_n, sandbox, code);

-- fill_pick(g) chooses message g's tenant (acme for 4 in 10, the nine
-- others for 2 in 30 each), environment (1 in 10 sandbox) and type.
CREATE FUNCTION pg_temp.fill_pick(g bigint) RETURNS TABLE (tenant_n bigint, sandbox boolean, code text)
LANGUAGE sql IMMUTABLE AS $$
    SELECT CASE WHEN abs(hashint8(g)) % 10 < 4 THEN 0 ELSE 1 + abs(hashint8(g + 1)) % 9 END,
           abs(hashint8(g + 2)) % 10 = 0,
           (ARRAY['ORDERS05', 'INVOIC02', 'DESADV01', 'SHOP_ORDER'])[1 + abs(hashint8(g + 3)) % 4]
$$;

SELECT clock_timestamp() AS fill_started \gset

-- Messages, a million per statement; received_at grows with g from a year
-- ago to now, the last :recent over the last week; one in ten came with an
-- Idempotency-Key (no fingerprint). The database is ANALYZEd once, after
-- the first million: `make bench/admin` times the pages first with the
-- statistics of a small database, as a hub that has grown since it was
-- last analyzed (autovacuum off) has, then ANALYZEs it and times them again.
SELECT statement FROM (
SELECT lo, format($f$
INSERT INTO messages (tenant_id, environment_id, message_type_id, docnum, payload, content_hash,
                      computed_fingerprint, fingerprint, source_endpoint, idempotency_key, remote_addr,
                      received_at, content_type, first_key_value)
SELECT ft.tenant_id, ft.environment_id, ft.message_type_id, d.docnum,
       json_build_object('IDOC', json_build_object('EDI_DC40', json_build_object('DOCNUM', d.docnum, 'IDOCTYP', ft.code),
                                                   'E1EDK01', json_build_object('BELNR', d.belnr))),
       sha256(g::text::bytea),
       CASE WHEN NOT d.keyed THEN encode(sha256(('fp' || g)::bytea), 'hex') END,
       CASE WHEN NOT d.keyed THEN encode(sha256(('fp' || g)::bytea), 'hex') END,
       'receive-message', CASE WHEN d.keyed THEN 'key-' || g END, '10.0.' || g %% 200 || '.' || g %% 250,
       CASE WHEN %4$s = 0 THEN now() - interval '365 days' * (1 - g::float8 / %1$s)
            WHEN g > %1$s - %4$s THEN now() - interval '7 days' * (1 - (g - (%1$s - %4$s))::float8 / %4$s)
            ELSE now() - interval '7 days' - interval '358 days' * (1 - g::float8 / greatest(%1$s - %4$s, 1)) END,
       'application/json', d.belnr
FROM generate_series(%2$s, %3$s) g
CROSS JOIN LATERAL pg_temp.fill_pick(g) p
JOIN fill_types ft USING (tenant_n, sandbox, code)
CROSS JOIN LATERAL (SELECT lpad(g::text, 16, '0') AS docnum, '47' || lpad(g::text, 8, '0') AS belnr,
                           abs(hashint8(g + 4)) %% 10 = 0 AS keyed) d
ORDER BY g$f$, :messages, lo, least(lo + 999999, :messages), :recent) AS statement
FROM generate_series(1, :messages, 1000000) lo
UNION ALL SELECT 1.5, 'ANALYZE') s ORDER BY lo \gexec

SELECT min(id) - 1 AS id_base FROM messages \gset

SELECT clock_timestamp() AS messages_done \gset

-- Blocked duplicates: event e blocks a copy of message g = e * messages /
-- blocked, 1 to 120 minutes after it arrived.
SELECT (:audit_events * 9 / 10)::bigint AS blocked \gset
SELECT format($f$
INSERT INTO audit_events (tenant_id, environment_id, message_type_id, message_id, action, actor, match_key, details, created_at)
SELECT m.tenant_id, m.environment_id, m.message_type_id, m.id, 'message.duplicate_blocked', 'api_key',
       coalesce(m.idempotency_key, m.computed_fingerprint),
       jsonb_build_object(
           'mode', CASE WHEN m.idempotency_key IS NULL THEN 'fingerprint' ELSE 'idempotency_key' END,
           CASE WHEN m.idempotency_key IS NULL THEN 'fingerprint' ELSE 'idempotency_key' END,
           coalesce(m.idempotency_key, m.computed_fingerprint),
           'original', jsonb_build_object('id', m.id, 'docnum', m.docnum),
           'blocked', jsonb_build_object('docnum', m.docnum, 'content_hash', encode(sha256(('copy' || e)::bytea), 'hex')),
           'content', c.content,
           'source', jsonb_build_object('endpoint', 'receive-message', 'integration_id', NULL,
                                        'remote_addr', m.remote_addr, 'request_id', 'req-' || e)),
       least(m.received_at + (1 + e %% 120) * interval '1 minute', now())
FROM generate_series(%1$s, %2$s) e
JOIN messages m ON m.id = %3$s + greatest(1, e::bigint * %4$s / %5$s)
CROSS JOIN LATERAL (SELECT CASE WHEN abs(hashint8(e)) %% 100 < 85 THEN 'identical'
                                WHEN abs(hashint8(e)) %% 100 < 90 THEN 'shape_only'
                                ELSE 'changed' END AS content) c
ORDER BY e$f$, lo, least(lo + 999999, :blocked), :id_base, :messages, :blocked)
FROM generate_series(1, :blocked, 1000000) lo \gexec

-- The copies whose content changed are kept for review; four in five have
-- been dismissed already.
INSERT INTO blocked_copies (tenant_id, environment_id, message_type_id, audit_event_id, original_message_id,
                            docnum, payload, content_hash, sender, received_at, key_values,
                            dismissed_at, dismissed_by, dismiss_reason)
SELECT e.tenant_id, e.environment_id, e.message_type_id, e.id, e.message_id,
       e.details->'blocked'->>'docnum',
       json_build_object('IDOC', json_build_object('EDI_DC40', json_build_object('DOCNUM', e.details->'blocked'->>'docnum'),
                                                   'E1EDK01', json_build_object('BELNR', e.match_key, 'CHANGED', e.id))),
       decode(e.details->'blocked'->>'content_hash', 'hex'), e.details->'source', e.created_at,
       ARRAY['47' || right(e.details->'blocked'->>'docnum', 8)],
       CASE WHEN e.id % 5 <> 0 THEN e.created_at + interval '1 day' END,
       CASE WHEN e.id % 5 <> 0 THEN 1 END,
       CASE WHEN e.id % 5 <> 0 THEN 'a correction the destination already has' END
FROM audit_events e
WHERE e.action = 'message.duplicate_blocked' AND e.details->>'content' = 'changed';

-- Everything else an audit log holds: sign-ins, failed sign-ins (outside
-- any tenant) and message type changes, spread over the year.
INSERT INTO audit_events (tenant_id, environment_id, message_type_id, action, actor, details, created_at)
SELECT CASE WHEN a.action = 'user.login_failed' THEN NULL ELSE ft.tenant_id END,
       NULL, CASE WHEN a.action = 'message_type.updated' THEN ft.message_type_id END,
       a.action, 'user:admin@' || ft.tenant_n || '.example',
       CASE WHEN a.action = 'user.login_failed'
            THEN jsonb_build_object('email', 'admin@' || ft.tenant_n || '.example', 'remote_addr', '192.0.2.' || e % 250)
            ELSE jsonb_build_object('remote_addr', '192.0.2.' || e % 250) END,
       now() - interval '365 days' * (1 - e::float8 / (:audit_events - :blocked))
FROM generate_series(1, :audit_events - :blocked) e
JOIN fill_types ft ON ft.n = e % (SELECT count(*) FROM fill_types)
CROSS JOIN LATERAL (SELECT (ARRAY['user.logged_in', 'user.login_failed', 'message_type.updated'])[1 + e % 3] AS action) a
ORDER BY e;

SELECT clock_timestamp() AS audit_done \gset

CREATE TABLE bench_fill (
    messages     bigint NOT NULL,
    recent       bigint NOT NULL,
    audit_events bigint NOT NULL,
    messages_s   float8 NOT NULL,
    audit_s      float8 NOT NULL,
    -- small until make bench/admin has timed the pages with the statistics
    -- of the first million messages and ANALYZEd the database.
    stats        text NOT NULL DEFAULT 'small',
    analyze_s    float8
);
INSERT INTO bench_fill (messages, recent, audit_events, messages_s, audit_s)
VALUES (:messages, :recent, :audit_events,
        extract(epoch FROM :'messages_done'::timestamptz - :'fill_started'::timestamptz),
        extract(epoch FROM :'audit_done'::timestamptz - :'messages_done'::timestamptz));
