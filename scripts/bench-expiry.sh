#!/usr/bin/env bash
# `make bench/expiry`: ingest latency while the retention sweeper deletes a
# large backlog of expired messages (docs/operations.md, "Retention").
#
#  1. builds bin/edihub and bin/edihub-load, creates a fresh database
#     edihub_expiry_bench and provisions it with the CLI;
#  2. inserts EXPIRY_ROWS messages (default 1,000,000) received 200 days ago,
#     each with a fingerprint and a business key value, straight in SQL;
#  3. serves with message expiry off and drives new messages at a fixed rate
#     (EXPIRY_RATE requests/s from EXPIRY_CLIENTS clients, EXPIRY_DURATION
#     measured): the baseline;
#  4. serves again with RETENTION_MESSAGES=90d, so that the sweeper starts
#     deleting the backlog at once, and drives the same load while it runs;
#  5. prints both rows and how many messages the sweep deleted while the
#     load ran (warm-up included), and how fast.
#
# Settings: PGHOST, PGPORT (default 127.0.0.1:5432, user postgres),
# EXPIRY_ROWS, EXPIRY_RATE (100), EXPIRY_CLIENTS (8), EXPIRY_DURATION (30s),
# EXPIRY_WARMUP (2s), SWEEP_BATCH_SIZE (1000).
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$PATH:/usr/local/go/bin"
. scripts/lib.sh

pg_host="${PGHOST:-127.0.0.1}"
pg_port="${PGPORT:-5432}"
db=edihub_expiry_bench
rows="${EXPIRY_ROWS:-1000000}"
rate="${EXPIRY_RATE:-100}"
clients="${EXPIRY_CLIENTS:-8}"
duration="${EXPIRY_DURATION:-30s}"
warmup="${EXPIRY_WARMUP:-2s}"
export SWEEP_BATCH_SIZE="${SWEEP_BATCH_SIZE:-1000}"
out=bin/bench-expiry
export DATABASE_URL="postgres://postgres@$pg_host:$pg_port/$db?sslmode=disable"
step() { printf '\n== %s\n' "$*" >&2; }
expired() { psql_db -d "$db" -c "SELECT count(*) FROM messages WHERE received_at < now() - interval '100 days'"; }

step "build"
mkdir -p "$out"
rm -f "$out"/*
go build -o bin/edihub ./cmd/edihub
go build -o bin/edihub-load ./cmd/edihub-load

step "database $db on $pg_host:$pg_port"
fresh_database "$db"
bench_tenant

step "$rows expired messages"
time psql_db -d "$db" <<SQL
INSERT INTO messages (tenant_id, environment_id, message_type_id, docnum, payload, content_hash,
                      computed_fingerprint, fingerprint, source_endpoint, received_at)
SELECT e.tenant_id, e.id, mt.id, lpad(g::text, 16, '0'),
       json_build_object('ORDERS05', json_build_object('IDOC', json_build_object(
           'E1EDK01', json_build_object('BELNR', lpad(g::text, 10, '0')), 'note', repeat('x', 800)))),
       sha256(int8send(g)), fp, fp, 'receive-message',
       now() - interval '200 days' + g * interval '1 millisecond'
FROM generate_series(1, $rows) g
CROSS JOIN LATERAL (SELECT lpad(to_hex(g), 64, '0') AS fp) f
JOIN environments e ON true JOIN message_types mt ON mt.tenant_id = e.tenant_id;
INSERT INTO message_keys (tenant_id, message_id, value)
SELECT tenant_id, id, docnum FROM messages;
CHECKPOINT;
SQL

trap stop_server_quietly EXIT
load() {
  bin/edihub-load run -url "$url" -key "$api_key" -mix new -clients "$clients" -rate "$rate" \
    -warmup "$warmup" -duration "$duration" -server-pid "$server_pid"
}

step "baseline: message expiry off, $rate requests/s from $clients clients for $duration"
start_server "$out/server-off.log" RETENTION_MESSAGES=off
load | tee "$out/off.json"
stop_server

step "expiry: RETENTION_MESSAGES=90d, the same load while the sweeper deletes the backlog"
before="$(expired)"
started="$(date +%s.%N)"
start_server "$out/server-on.log" RETENTION_MESSAGES=90d
load | tee "$out/on.json"
after="$(expired)"
seconds="$(echo "$(date +%s.%N) - $started" | bc)"
stop_server
printf 'the sweep deleted %d of %d expired messages in the %.0f s the server ran, %.0f a second (SWEEP_BATCH_SIZE=%s)\n' \
  "$((before - after))" "$before" "$seconds" "$(echo "($before - $after) / $seconds" | bc -l)" "$SWEEP_BATCH_SIZE" | tee "$out/sweep.txt"
printf 'load average %s\n' "$(cut -d' ' -f1-3 /proc/loadavg)" | tee -a "$out/sweep.txt"
