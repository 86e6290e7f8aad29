-- The insert of scripts/bench/insert.sql, for :rows messages in one
-- statement: the limit PostgreSQL sets on storing a batch or packet of that
-- many messages, with no work outside the database. scripts/bench.sh
-- passes tenant, env, mt, payload, hash and rows with -D.
\set a random(1, 9000000000000000000)
INSERT INTO messages (
    tenant_id, environment_id, message_type_id, docnum, payload, content_hash,
    computed_fingerprint, fingerprint, source_endpoint, integration_id, idempotency_key, remote_addr
) SELECT
    :tenant, :env, :mt, lpad((:a::bigint + g)::text, 19, '0'), :payload, decode(:hash, 'hex'),
    md5((:a::bigint + g)::text) || md5(g::text), md5((:a::bigint + g)::text) || md5(g::text),
    'receive-messages', NULL, NULL, '127.0.0.1'
FROM generate_series(1, :rows) AS g
ON CONFLICT (tenant_id, environment_id, fingerprint) WHERE fingerprint IS NOT NULL DO NOTHING
RETURNING id, received_at;
