#!/usr/bin/env bash
# `make sizing`: bytes per stored row of each kind of data, tables and
# indexes together (pg_total_relation_size, TOAST included), measured on a
# population of SIZING_ROWS rows (default 100,000) of each kind inserted in
# SQL into a fresh database edihub_sizing, in the shapes ingest writes them:
#   - a message with the load generator's 2 KiB ORDERS05 payload
#     (compressible, as IDocs are) and its business key value;
#   - a message with 2 KiB of random characters (incompressible);
#   - a message.duplicate_blocked audit event;
#   - a blocked copy (changed content, with its sender headers);
#   - a delivery and a delivery attempt.
# docs/operations.md ("Sizing") turns them into bytes per day.
set -euo pipefail
shopt -s inherit_errexit
cd "$(dirname "$0")/.."
export PATH="$PATH:/usr/local/go/bin"
. scripts/lib.sh

pg_host="${PGHOST:-127.0.0.1}"
pg_port="${PGPORT:-5432}"
db=edihub_sizing
n="${SIZING_ROWS:-100000}"
export DATABASE_URL="postgres://postgres@$pg_host:$pg_port/$db?sslmode=disable"

go build -o bin/edihub ./cmd/edihub
go build -o bin/edihub-load ./cmd/edihub-load
fresh_database "$db"
bin/edihub migrate 2>/dev/null
bin/edihub tenant create sizing >/dev/null
bin/edihub env create --tenant sizing production >/dev/null
bin/edihub message-type create --tenant sizing ORDERS05 --fields '["*.IDOC.E1EDK01.BELNR"]' >/dev/null
# A destination by SQL: the CLI would resolve its host, and this machine
# may have no DNS.
psql_db -d "$db" -c "INSERT INTO destinations (tenant_id, environment_id, url, secret)
  SELECT tenant_id, id, 'https://example.com/hook', 'whsec_c2l6aW5n' FROM environments"
payload="$(bin/edihub-load payload -size 2048)"

# size prints the bytes of the tables named, with their indexes and TOAST,
# and those of their partitions (audit_events has one a month).
size() {
  psql_db -d "$db" -c "SELECT sum(pg_total_relation_size(coalesce(p.relid, t)))
    FROM unnest(string_to_array('$1', ',')::regclass[]) t LEFT JOIN LATERAL pg_partition_tree(t) p ON true"
}
# measure runs the SQL in $2 and prints the growth of the tables in $1 per row.
measure() {
  local before after
  before="$(size "$1")"
  # psql expands :n and :'payload' in a script it reads, not in -c.
  printf '%s\n' "$2;" | psql_db -d "$db" -v n="$n" -v payload="$payload" -f - >/dev/null
  psql_db -d "$db" -c "CHECKPOINT" >/dev/null
  after="$(size "$1")"
  echo $(( (after - before) / n ))
}

messages() { # payload expression, first number
  cat <<SQL
INSERT INTO messages (tenant_id, environment_id, message_type_id, docnum, payload, content_hash,
                      computed_fingerprint, fingerprint, source_endpoint, remote_addr, first_key_value)
SELECT e.tenant_id, e.id, mt.id, lpad(g::text, 16, '0'), $1, sha256(int8send(g)),
       encode(sha256(int8send(g)), 'hex'), encode(sha256(int8send(g)), 'hex'), 'receive-message', '10.1.2.3',
       lpad(g::text, 16, '0')
FROM generate_series($2, $2 + :n - 1) g JOIN environments e ON true JOIN message_types mt ON mt.tenant_id = e.tenant_id;
SQL
}

compressible="$(measure messages,message_keys "$(messages "replace(:'payload', '0000000000000001', lpad(g::text, 16, '0'))::json" 1)")"
incompressible="$(measure messages,message_keys "$(messages "json_build_object('ORDERS05', (SELECT string_agg(md5(g::text || r::text || random()::text), '') FROM generate_series(1, 64) r))" "$((n + 1))")")"
event="$(measure audit_events "
INSERT INTO audit_events (tenant_id, environment_id, message_type_id, message_id, action, actor, match_key, details)
SELECT m.tenant_id, m.environment_id, m.message_type_id, m.id, 'message.duplicate_blocked', 'api_key:1', m.fingerprint,
       jsonb_build_object('mode', 'fingerprint', 'fingerprint', m.fingerprint,
         'original', jsonb_build_object('id', m.id, 'docnum', m.docnum), 'content', 'changed',
         'source', jsonb_build_object('endpoint', 'receive-message', 'integration_id', null,
                                      'remote_addr', '10.1.2.3', 'request_id', md5(m.id::text)))
FROM messages m ORDER BY m.id LIMIT :n")"
copy="$(measure blocked_copies "
INSERT INTO blocked_copies (tenant_id, environment_id, message_type_id, audit_event_id, received_at, original_message_id,
                            docnum, payload, content_hash, sender, key_values)
SELECT a.tenant_id, a.environment_id, a.message_type_id, a.id, a.created_at, a.message_id, m.docnum,
       replace(:'payload', '0000000000000001', m.docnum)::json, sha256(int8send(-a.id)),
       jsonb_build_object('endpoint', 'receive-message', 'integration_id', null, 'remote_addr', '10.1.2.3',
         'request_id', md5(a.id::text), 'headers', jsonb_build_object('User-Agent', 'SAP NetWeaver Application Server (1.0;754)')),
       ARRAY[m.docnum]
FROM audit_events a JOIN messages m ON m.id = a.message_id")"
delivery="$(measure deliveries "
INSERT INTO deliveries (tenant_id, environment_id, message_id, destination_id, message_type_id, status, attempts, last_attempt_at, delivered_at)
SELECT m.tenant_id, m.environment_id, m.id, d.id, m.message_type_id, 'delivered', 1, now(), now()
FROM messages m JOIN destinations d ON true ORDER BY m.id LIMIT :n")"
attempt="$(measure delivery_attempts "
INSERT INTO delivery_attempts (delivery_id, attempt, started_at, duration_ms, response_status, response_snippet)
SELECT id, 1, now(), 42, 200, '{\"ok\":true}' FROM deliveries")"

cat <<EOF2
bytes per row, tables and indexes ($n rows each):
  message, compressible 2 KiB payload:   $compressible
  message, incompressible 2 KiB payload: $incompressible
  audit event (duplicate blocked):       $event
  blocked copy:                          $copy
  delivery:                              $delivery
  delivery attempt:                      $attempt
EOF2
