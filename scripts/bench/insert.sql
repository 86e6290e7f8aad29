-- The insert edihub makes for a new message (MessageInsert in
-- queries/messages.sql): the same table, columns, unique index and payload,
-- so that pgbench running this script measures the limit PostgreSQL sets on
-- ingest. The fingerprint is the hex of two random numbers, as wide as a
-- SHA-256, so every insert claims a new entry in uq_messages_fingerprint.
-- scripts/bench.sh passes tenant, env, mt, payload and hash with -D.
\set a random(1, 9223372036854775806)
\set b random(1, 9223372036854775806)
INSERT INTO messages (
    tenant_id, environment_id, message_type_id, docnum, payload, content_hash,
    computed_fingerprint, fingerprint, source_endpoint, integration_id, idempotency_key, remote_addr
) VALUES (
    :tenant, :env, :mt, lpad(:a::text, 19, '0'), :payload, decode(:hash, 'hex'),
    md5(:a::text) || md5(:b::text), md5(:a::text) || md5(:b::text), 'receive-message', NULL, NULL, '127.0.0.1'
)
ON CONFLICT (tenant_id, environment_id, fingerprint) WHERE fingerprint IS NOT NULL DO NOTHING
RETURNING id, received_at;
