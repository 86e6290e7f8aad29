#!/usr/bin/env bash
# `make bench`: measures edihub's ingest against the limit PostgreSQL sets,
# on this machine, in one run (docs/performance.md explains the method).
#
#  1. builds bin/edihub and bin/edihub-load, starts a PostgreSQL cluster of
#     its own under bin/bench/pg with production settings (shared_buffers
#     4GB, so that the tables and indexes a run fills stay in memory as they
#     would on a production server of this size, max_wal_size 8GB and
#     checkpoint_timeout 15min, so that no checkpoint falls inside a row,
#     autovacuum on), unless PGHOST names a server to use instead, creates
#     a fresh database edihub_bench there and provisions it with the CLI;
#  2. starts `edihub serve` and drives it with edihub-load, a warm-up and
#     then a measured period each row: three mixes (new messages,
#     fingerprint duplicates, Idempotency-Key replays) at each client count
#     but 16; JSON batches (receive-messages) and IDoc-XML packets
#     (receive-message) of 1 and 10 new messages at 16 clients, measured in
#     messages per second; and the packet, the X12 interchange and the
#     EDIFACT interchange of 100 sent again whole by each client, as SAP
#     resends a packet, and a partner an interchange, whose acknowledgement
#     was lost;
#  3. measures the floor (floor.Floor) at the same client counts: net/http
#     and pgx running pgbench's insert for each request, nothing else, the
#     most any HTTP service in Go can reach on these cores; and the batch
#     floor: JSON batches of 10 decoded and stored with one statement;
#  4. compares edihub with the floor at 16 clients in rounds: edihub's three
#     mixes beside the floor's single messages, and edihub's batches,
#     packets, X12 and EDIFACT interchanges of 100 beside the batch floor
#     of 100, each round in the reverse order of the one before, since the
#     machine's speed moves by the minute, and each server, once started,
#     first serves a row's time of requests unmeasured, since the first row
#     after a start runs slower than the next; the report's targets divide each
#     row by the floor's row of its round; beside the batch floor, each
#     round also measures the floor of packets, X12 and EDIFACT (the same
#     requests read with edihub's parser, their messages stored with one
#     statement), which the report sets beside edihub's rows of that form;
#  5. runs pgbench with scripts/bench/insert.sql, the same insert, right
#     after every row of steps 2 and 3 at the row's client count (the
#     row's ratio is to that run), then at each client count on its own,
#     against the same server, and with
#     scripts/bench/insert-rows.sql, that insert for as many rows in one
#     statement as each batch size, at the batch client count;
#  6. runs the 16-client rows again (single messages, batches and packets
#     of 100, the floor, pgbench) with PostgreSQL on the first half of the
#     CPUs and everything else on the other half, when the server is on
#     this machine: the same CPU for PostgreSQL in edihub's rows and in
#     pgbench's, so that the ratio says whether PostgreSQL is the limit;
#  7. restarts edihub and posts 5 MiB messages from 16 clients to measure
#     peak memory against the bytes in flight;
#  8. runs the Go micro benchmarks of the fingerprint and the content hash
#     next to the floor of hashing the raw bytes, and the memory of a 10 MiB
#     X12 interchange beside an IDoc-XML packet of the same size;
#  9. measures delivery to a local receiver: deliveries per second and the
#     lag from ingest answer to first attempt (internal/delivery), on the
#     local PostgreSQL and on a high-availability formation of its own
#     (unless BENCH_SKIP_DELIVERY=1);
# 10. prints the tables (written to bin/bench/report.md as well).
#
# Settings: PGHOST, PGPORT (a server to use, user postgres; default a
# cluster of the bench's own on 127.0.0.1:BENCH_PGPORT, 55434),
# BENCH_CLIENTS ("1 16 64"), BENCH_DURATION (10s), BENCH_WARMUP (2s),
# BENCH_FLOOR_ROUNDS (rounds of step 4, 2), BENCH_SKIP_DELIVERY (1: no step 9),
# BENCH_PAYLOAD (payload bytes, 2048), BENCH_LARGE_REQUESTS (5 per client),
# BENCH_DELIVERY_MESSAGES (2000), BENCH_BATCH_CLIENTS (16), BENCH_BATCH_SIZES
# (messages per batch or packet, "1 10 100"; the rounds and the requests
# sent again use the largest), BENCH_BATCH_DURATION (measured
# time of each of those rows, BENCH_DURATION; a row counts the requests that
# start within it, so it must be several times as long as one request of
# 100 messages takes).
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$PATH:/usr/local/go/bin"
. scripts/lib.sh

pg_host="${PGHOST:-127.0.0.1}"
pg_port="${PGPORT:-${BENCH_PGPORT:-55434}}"
own_cluster=""
[ -n "${PGHOST:-}" ] || own_cluster="$PWD/bin/bench/pg"
db=edihub_bench
clients="${BENCH_CLIENTS:-1 16 64}"
duration="${BENCH_DURATION:-10s}"
warmup="${BENCH_WARMUP:-2s}"
payload_size="${BENCH_PAYLOAD:-2048}"
large_requests="${BENCH_LARGE_REQUESTS:-5}"
delivery_messages="${BENCH_DELIVERY_MESSAGES:-2000}"
batch_clients="${BENCH_BATCH_CLIENTS:-16}"
batch_sizes="${BENCH_BATCH_SIZES:-1 10 100}"
batch_duration="${BENCH_BATCH_DURATION:-$duration}"
floor_rounds="${BENCH_FLOOR_ROUNDS:-2}"
skip_delivery="${BENCH_SKIP_DELIVERY:-0}"
# pgbench runs at every client count that a row compares with.
pg_clients="$(printf '%s\n' $clients $batch_clients | sort -nu | tr '\n' ' ')"
out=bin/bench
export DATABASE_URL="postgres://postgres@$pg_host:$pg_port/$db?sslmode=disable"

# Debian keeps pgbench out of PATH, beside initdb.
pgbench="$(pg_bindir)/pgbench"
[ -x "$pgbench" ] || { echo "pgbench not found: install PostgreSQL's server binaries" >&2; exit 1; }
seconds() { echo "${1%s}"; }

step() { printf '\n== %s\n' "$*" >&2; }

step "build"
mkdir -p "$out"
rm -f "$out"/*.jsonl "$out"/*.json "$out"/*.log "$out"/*.txt "$out"/report.md
go build -o bin/edihub ./cmd/edihub
go build -o bin/edihub-load ./cmd/edihub-load

if [ -n "$own_cluster" ]; then
  step "PostgreSQL cluster of its own in $own_cluster on 127.0.0.1:$pg_port, production settings"
  start_cluster "$own_cluster" "$pg_port" shared_buffers=4GB effective_cache_size=12GB \
    max_wal_size=8GB checkpoint_timeout=15min max_connections=300 autovacuum=on
fi
step "database $db on $pg_host:$pg_port"
fresh_database "$db"
bench_tenant

cleanup() {
  stop_server_quietly
  [ -z "$own_cluster" ] || stop_cluster "$own_cluster"
}
trap cleanup EXIT

# checkpointed prints the buffers PostgreSQL's checkpoints have written so
# far, and autovacuumed the times autovacuum has vacuumed or analyzed a
# table of the database. A checkpoint writes the data pages that inserts
# dirtied and then fsyncs them, which can hold up every commit's WAL flush
# behind it, and autovacuum reads and writes the pages that the rows
# before filled; each row records both meanwhile (bin/bench/checkpoints.txt),
# so that a slow row can be told from a slow edihub.
checkpointed() { psql_db -d postgres -c "SELECT buffers_checkpoint FROM pg_stat_bgwriter"; }
autovacuumed() {
  psql_db -d "$db" -c "SELECT coalesce(sum(autovacuum_count + autoanalyze_count), 0) FROM pg_stat_all_tables"
}
# pgbench_insert_rate CLIENTS NAME [BESIDE] runs scripts/bench/insert.sql at
# CLIENTS clients, a warm-up and then $duration measured, keeping pgbench's
# output as $out/NAME.txt, and appends the result to $pgbench_results
# (pgbench.jsonl) with the number of the load row it ran beside, if any.
pgbench_results="$out/pgbench.jsonl"
pgbench_insert_rate() {
  local c="$1" name="$2" beside="${3:-0}" args tps lat failed
  args=("$payload_size" -c "$c" -j "$((c < 2 ? c : 2))" -f scripts/bench/insert.sql)
  start_clean
  pgbench_insert "${args[@]}" -T "$(seconds "$warmup")" >/dev/null 2>&1
  pgbench_insert "${args[@]}" -T "$(seconds "$duration")" -P 1 >"$out/$name.txt" 2>"$out/$name.log"
  tps="$(sed -n 's/^tps = \([0-9.]*\).*/\1/p' "$out/$name.txt")"
  lat="$(sed -n 's/^latency average = \([0-9.]*\) ms/\1/p' "$out/$name.txt")"
  failed="$(sed -n 's/^number of failed transactions: \([0-9]*\).*/\1/p' "$out/$name.txt")"
  printf '{"clients":%d,"beside":%d,"tps":%s,"latency_avg_ms":%s,"failed":%s}\n' \
    "$c" "$beside" "${tps:-0}" "${lat:-0}" "${failed:-0}" >>"$pgbench_results"
  printf '  pgbench c=%-3d %s tps\n' "$c" "${tps:-?}" >&2
}

# load_row ROW_NAME ARGS... runs edihub-load with ARGS against the server,
# appending its row to $rows (rows.jsonl) and the checkpoint writes to
# checkpoints.txt, after start_clean. measured ROW_NAME ARGS... does so and then runs
# pgbench's insert at the row's client count (-clients in ARGS): the
# machine's speed moves by the minute on shared hardware, and the row is
# compared with the pgbench run beside it.
rows="$out/rows.jsonl"
load_row() {
  local name="$1" before vacuums
  shift
  start_clean
  before="$(checkpointed)" vacuums="$(autovacuumed)"
  bin/edihub-load run -url "$url" -key "$api_key" -server-pid "$server_pid" -postgres-database "$db" "$@" >>"$rows"
  printf '%s: %d buffers written by checkpoints, %d autovacuums\n' "$name" "$(($(checkpointed) - before))" \
    "$(($(autovacuumed) - vacuums))" >>"$out/checkpoints.txt"
}
measured() {
  local c="" previous="" arg row
  for arg in "${@:2}"; do
    [ "$previous" != -clients ] || c="$arg"
    previous="$arg"
  done
  load_row "$@"
  row="$(wc -l <"$rows")"
  pgbench_insert_rate "$c" "pgbench-beside-${row_prefix:+pinned-}$row" "$row"
}

# single_rows CLIENTS... measures the three mixes of single messages at
# each client count; multi_rows SIZES... measures JSON batches and IDoc-XML
# packets of each size at the batch client count; again_rows N FORMS...
# measures requests of N messages of each form sent again whole, as SAP
# resends a packet, and a partner an interchange, whose acknowledgement
# was lost. Each row's name starts with $row_prefix.
row_prefix=""
# largest N... prints the largest of its numbers; all_but N ITEM... prints
# the items other than N.
largest() { printf '%s\n' "$@" | sort -n | tail -n 1; }
all_but() {
  local n="$1" item
  shift
  for item in "$@"; do [ "$item" = "$n" ] || printf '%s ' "$item"; done
}
single_rows() {
  local mix c
  for mix in new duplicate replay; do
    for c in "$@"; do
      measured "$row_prefix$mix c=$c" -mix "$mix" -clients "$c" -warmup "$warmup" -duration "$duration" -payload-size "$payload_size"
    done
  done
}
multi_rows() {
  local form n
  for form in batch packet; do
    for n in "$@"; do
      measured "$row_prefix$form×$n c=$batch_clients" -mix new -form "$form" -per-request "$n" \
        -clients "$batch_clients" -warmup "$warmup" -duration "$batch_duration" -payload-size "$payload_size"
    done
  done
}
again_rows() {
  local n="$1" form
  shift
  for form in "$@"; do
    measured "$row_prefix$form×$n again c=$batch_clients" -mix duplicate -form "$form" -per-request "$n" \
      -clients "$batch_clients" -warmup "$warmup" -duration "$batch_duration" -payload-size "$payload_size"
  done
}

# The comparisons with the floor at the batch client count run in rounds,
# below; the other client counts and sizes once each, here.
largest_size="$(largest $batch_sizes)"
other_clients="$(all_but "$batch_clients" $clients)"
smaller_sizes="$(all_but "$largest_size" $batch_sizes)"

step "edihub: mixes new, duplicate, replay at clients ${other_clients:-(none)}; batches and packets of ${smaller_sizes:-(none)} new messages and packets and interchanges of $largest_size sent again, at $batch_clients clients ($warmup warm-up, $duration measured each, $batch_duration for requests of several)"
start_server "$out/server.log"
single_rows $other_clients
multi_rows $smaller_sizes
again_rows "$largest_size" packet x12 edifact
stop_server

# floor_rows CLIENTS... measures new messages at each client count on the
# floor (floor.Floor): the most any HTTP service in Go reaches on these
# cores for the insert pgbench runs; its rows are labelled "floor". First
# the batch floor: JSON batches of each size in $batch_sizes above 1,
# decoded and stored with one statement each.
floor_rows() {
  local c n
  start_floor "$out/floor${row_prefix:+-pinned}.log"
  for n in $batch_sizes; do
    [ "$n" -gt 1 ] || continue
    measured "${row_prefix}floor batch×$n c=$batch_clients" -label floor -mix new -form batch -per-request "$n" \
      -clients "$batch_clients" -warmup "$warmup" -duration "$batch_duration" -payload-size "$payload_size"
  done
  for c in "$@"; do
    measured "${row_prefix}floor c=$c" -label floor -mix new -clients "$c" -warmup "$warmup" -duration "$duration" -payload-size "$payload_size"
  done
  stop_server
}

step "floor: net/http and pgbench's insert, nothing else, at clients ${other_clients:-(none)}, and batches of ${smaller_sizes:-(none)}"
[ -z "$other_clients$smaller_sizes" ] || batch_sizes="$smaller_sizes" floor_rows $other_clients

# round_part ROUND PART measures one part of a round of the comparisons
# with the floor at the batch client count, without pgbench beside (the
# floor is beside them): edihub's three mixes of single messages
# (edihub-single), the floor's new single messages (floor-single), edihub's
# JSON batches, IDoc-XML packets and X12 and EDIFACT interchanges of the
# largest size (edihub-multi), or the floor of each of those forms at that
# size (floor-multi), the batch floor first. It starts the server the part needs when the other one
# runs.
serving=""
# The forms of several messages that edihub and the floor each run in a round.
multi_forms="batch packet x12 edifact"
round_part() {
  local round="$1" part="$2" mix form args
  if [ "$serving" != "${part%%-*}" ]; then
    [ -z "$serving" ] || stop_server
    serving="${part%%-*}"
    if [ "$serving" = edihub ]; then start_server "$out/server-rounds.log"; else start_floor "$out/floor-rounds.log"; fi
    warm_up "$part"
  fi
  args=(-round "$round" -clients "$batch_clients" -warmup "$warmup" -payload-size "$payload_size")
  case "$part" in
    edihub-single)
      for mix in new duplicate replay; do
        load_row "round $round: $mix c=$batch_clients" -mix "$mix" -duration "$duration" "${args[@]}"
      done ;;
    floor-single)
      load_row "round $round: floor c=$batch_clients" -label floor -mix new -duration "$duration" "${args[@]}" ;;
    edihub-multi)
      for form in $multi_forms; do
        load_row "round $round: $form×$largest_size c=$batch_clients" -mix new -form "$form" -per-request "$largest_size" \
          -duration "$batch_duration" "${args[@]}"
      done ;;
    floor-multi)
      for form in $multi_forms; do
        load_row "round $round: floor $form×$largest_size c=$batch_clients" -label floor -mix new -form "$form" \
          -per-request "$largest_size" -duration "$batch_duration" "${args[@]}"
      done ;;
  esac
}

# warm_up PART sends the part's first kind of request, unmeasured, for a
# row's time to a server just started. The first row after a start ran 10
# to 25 % slower than the next one on the same server, edihub's and the
# floor's alike, with its latencies falling through the row; and which row
# that is alternates between the two from round to round: in one round the
# batch floor that every row of requests of several is divided by, in the
# next edihub's JSON batches.
warm_up() {
  local args=(-mix new -clients "$batch_clients" -warmup "$warmup" -duration "$duration" -payload-size "$payload_size")
  [ "${1%%-*}" = edihub ] || args+=(-label floor)
  [ "${1#*-}" = single ] || args+=(-form batch -per-request "$largest_size")
  bin/edihub-load run -url "$url" -key "$api_key" "${args[@]}" >/dev/null
}

# Each round compares edihub with the floor twice: on single messages and
# on requests of $largest_size. Even rounds run the parts in the reverse
# order, so that each comparison has edihub first in one round and the
# floor first in the next, and the floor's two parts share one start.
step "rounds: edihub beside the floor at $batch_clients clients, single messages and requests of $largest_size, $floor_rounds rounds"
for round in $(seq 1 "$floor_rounds"); do
  while read -r part; do
    round_part "$round" "$part"
  done < <(round_order "$round" edihub-single floor-single floor-multi edihub-multi)
done
[ -z "$serving" ] || stop_server
serving=""

# pgbench_rows CLIENTS... runs scripts/bench/insert.sql at each client
# count, and scripts/bench/insert-rows.sql for each batch size above 1 at
# the batch client count, appending the results to $pgbench_results
# (pgbench.jsonl) and keeping pgbench's output under $out with prefix $1.
pgbench_rows() {
  local prefix="$1" c n tps failed args
  shift
  for c in "$@"; do
    pgbench_insert_rate "$c" "$prefix-$c"
  done
  # What the rows of batches and packets are measured against as well: the
  # same insert for as many messages in one statement, which is as fast as
  # PostgreSQL can store them here with nothing else to do.
  for n in $batch_sizes; do
    [ "$n" -gt 1 ] || continue
    args=("$payload_size" -c "$batch_clients" -j 2 -f scripts/bench/insert-rows.sql -D "rows=$n")
    start_clean
    pgbench_insert "${args[@]}" -T "$(seconds "$warmup")" >/dev/null 2>&1
    pgbench_insert "${args[@]}" -T "$(seconds "$batch_duration")" >"$out/$prefix-rows-$n.txt" 2>"$out/$prefix-rows-$n.log"
    tps="$(sed -n 's/^tps = \([0-9.]*\).*/\1/p' "$out/$prefix-rows-$n.txt")"
    failed="$(sed -n 's/^number of failed transactions: \([0-9]*\).*/\1/p' "$out/$prefix-rows-$n.txt")"
    printf '{"clients":%d,"rows":%d,"tps":%s,"failed":%s}\n' "$batch_clients" "$n" "${tps:-0}" "${failed:-0}" >>"$pgbench_results"
    printf '  pgbench c=%-3d rows=%-3d %s tps\n' "$batch_clients" "$n" "${tps:-?}" >&2
  done
}

step "pgbench: scripts/bench/insert.sql at clients $pg_clients, and scripts/bench/insert-rows.sql, rows $batch_sizes a statement, at $batch_clients clients"
pgbench_rows pgbench $pg_clients

# postmaster_pid prints the process id of the PostgreSQL server when it
# runs on this machine and its postmaster.pid can be read; nothing else.
postmaster_pid() {
  local dir
  case "$pg_host" in 127.0.0.1 | localhost | ::1 | /*) ;; *) return 0 ;; esac
  dir="$(psql_db -d postgres -c 'SHOW data_directory' 2>/dev/null)" || return 0
  [ -r "$dir/postmaster.pid" ] && head -n 1 "$dir/postmaster.pid"
}
# postgres_cpu_list prints the CPUs the server may run on ("unknown" when
# it is not on this machine), for the report: a server left on fewer CPUs
# than the machine has would make every shared-core row wrong.
postgres_cpu_list() {
  local pid
  pid="$(postmaster_pid)"
  if [ -n "$pid" ]; then cpus_of "$pid"; else echo unknown; fi
}
# cpus_of PID prints the CPUs process PID may run on, as taskset -c takes them.
cpus_of() { taskset -c -p "$1" 2>/dev/null | sed 's/.*: //'; }
# set_affinity CPUS PID... sets the CPUs of each process and its threads.
set_affinity() {
  local cpus="$1" pid
  shift
  for pid in "$@"; do taskset -a -p -c "$cpus" "$pid" >/dev/null 2>&1 || true; done
}
# pin_postgres CPUS gives the server, and every process it has or will
# fork (they inherit the postmaster's CPUs), only CPUS; unpin_postgres
# gives back the CPUs it had.
pin_postgres() {
  postmaster="$(postmaster_pid)"
  [ -n "$postmaster" ] && postgres_cpus="$(cpus_of "$postmaster")" || return 1
  set_affinity "$1" "$postmaster" $(pgrep -P "$postmaster")
}
postmaster=""
unpin_postgres() {
  [ -z "$postmaster" ] || set_affinity "$postgres_cpus" "$postmaster" $(pgrep -P "$postmaster")
  postmaster=""
}

cpus="$(nproc)"
pinned_rows="$out/pinned-rows.jsonl" pinned_pgbench="$out/pinned-pgbench.jsonl"
# cpu_list FIRST LAST names CPUs FIRST to LAST as taskset -c takes them.
cpu_list() { if [ "$1" = "$2" ]; then echo "$1"; else echo "$1-$2"; fi; }
postgres_half="$(cpu_list 0 $((cpus / 2 - 1)))" others_half="$(cpu_list $((cpus / 2)) $((cpus - 1)))"
trap 'unpin_postgres; cleanup' EXIT
if [ "$cpus" -lt 2 ] || ! command -v taskset >/dev/null || ! pin_postgres "$postgres_half"; then
  step "PostgreSQL on CPUs of its own: skipped (needs 2 CPUs or more, taskset, and the server on this machine)"
else
  step "PostgreSQL on CPUs $postgres_half, edihub, its load and pgbench on CPUs $others_half: the $batch_clients-client rows again"
  (
    # Everything this shell starts from here on inherits its CPUs.
    taskset -p -c "$others_half" "$BASHPID" >/dev/null
    trap stop_server_quietly EXIT
    rows="$pinned_rows" pgbench_results="$pinned_pgbench" row_prefix="pinned "
    start_server "$out/server-pinned.log"
    single_rows "$batch_clients"
    n="$(largest $batch_sizes)"
    multi_rows "$n"
    again_rows "$n" packet
    stop_server
    batch_sizes="$n" floor_rows "$batch_clients"
    batch_sizes="$n" pgbench_rows pgbench-pinned "$batch_clients"
  )
  unpin_postgres
fi

step "memory: 16 clients × $large_requests posts of 5 MiB on a fresh server"
start_server "$out/server-large.log"
bin/edihub-load run -url "$url" -key "$api_key" -mix new -clients 16 -requests "$large_requests" \
  -payload-size $((5 << 20)) -server-pid "$server_pid" -postgres-database "$db" >"$out/memory.json"
stop_server

step "Go micro benchmarks"
# Three counts of each, so that a run disturbed by other work on the machine
# shows as an outlier rather than as the result.
go test -run '^$' -bench . -benchmem -count 3 ./internal/fingerprint/ ./internal/canon/ | tee "$out/micro.txt" >&2
# A 10 MiB X12 interchange of 1,000 transaction sets stored whole through
# the server in one process, beside an IDoc-XML packet of 1,000 IDocs of the
# same size: the heap's peak above its start and the bytes allocated per
# byte of body (docs/performance.md, "A 10 MiB interchange").
go test -run '^$' -bench 'BenchmarkLargeInterchangeMemory' -benchtime 3x -count 3 ./internal/server/ | tee -a "$out/micro.txt" >&2

# delivery_rows measures delivery on the local PostgreSQL and on a
# formation of its own (step 9).
delivery_rows() {
  step "delivery: to a local receiver, one worker process, $delivery_messages messages"
  # End to end (ingest from 8 clients while the worker delivers: delivered÷stored
  # and the lag from each ingest answer to the first attempt's arrival) at
  # several limits, at a paced intake, beside a slow or failing destination and
  # among 1,000 idle ones; drain (messages stored first, then delivered); and a
  # receiver that takes 200 ms, with fewer messages, since it is slow by design.
  go test -run '^$' -bench 'BenchmarkDelivery(|Paced|Drain|SlowBesideFast|IdleDestinations)$' -benchtime "${delivery_messages}x" \
    ./internal/delivery/ | tee "$out/delivery.txt" >&2
  go test -run '^$' -bench 'BenchmarkDeliverySlowReceiver$' -benchtime 200x ./internal/delivery/ | tee -a "$out/delivery.txt" >&2

  step "delivery on a high-availability formation: $delivery_messages messages at the default limit (8)"
  # The end-to-end benchmark again, on a formation of its own (scripts/ha.sh:
  # a pg_auto_failover monitor and three nodes with synchronous replication),
  # so that every commit of ingest and of the attempts' records waits for a
  # standby, as it does in a deployment that keeps every message on two
  # machines.
  formation="$(mktemp -d /tmp/edihub-bench-formation-XXXXXX)"
  chmod 755 "$formation"
  trap 'cleanup; scripts/ha.sh down "$formation" >/dev/null 2>&1 || true' EXIT
  scripts/ha.sh up "$formation" "${BENCH_FORMATION_PORT:-15450}" >/dev/null
  primary_port="$(( $(cat "$formation/port") + 1 ))"
  TEST_DATABASE_URL="postgres://postgres@127.0.0.1:$primary_port/edihub?sslmode=disable" \
    go test -run '^$' -bench 'BenchmarkDelivery$/limit=8$' -benchtime "${delivery_messages}x" ./internal/delivery/ |
    sed 's/^BenchmarkDelivery/BenchmarkDeliveryFormation/' | tee -a "$out/delivery.txt" >&2
  scripts/ha.sh down "$formation" >/dev/null
  trap cleanup EXIT
  rm -rf "$formation"
}
if [ "$skip_delivery" = 1 ]; then
  step "delivery: skipped (BENCH_SKIP_DELIVERY=1)"
else
  delivery_rows
fi

step "report"
{
  echo "Machine: $(nproc) cores, $(free -g | awk '/^Mem:/ {print $2}') GiB, $(lscpu | sed -n 's/^Model name: *//p' | head -n 1);" \
    "$(psql_db -d postgres -c 'SHOW server_version' | head -n 1) (fsync $(psql_db -d postgres -c 'SHOW fsync'), synchronous_commit $(psql_db -d postgres -c 'SHOW synchronous_commit'), shared_buffers $(psql_db -d postgres -c 'SHOW shared_buffers'), max_wal_size $(psql_db -d postgres -c 'SHOW max_wal_size'), autovacuum $(psql_db -d postgres -c 'SHOW autovacuum'), ${own_cluster:+a cluster of the bench alone}${own_cluster:-the server PGHOST names});" \
    "PostgreSQL allowed CPUs $(postgres_cpu_list) of the $cpus outside step 8;" \
    "payload $payload_size bytes; $warmup warm-up + $duration per row ($batch_duration for batches, packets and interchanges);" \
    "$floor_rounds rounds of the comparison with the floor;" \
    "load average $(cut -d' ' -f1-3 /proc/loadavg) when the report was written (other work on the machine shows here)."
  echo
  bin/edihub-load report -rows "$out/rows.jsonl" -pgbench "$out/pgbench.jsonl" -memory "$out/memory.json"
  echo
  if [ -s "$pinned_rows" ]; then
    echo "With PostgreSQL on CPUs $postgres_half and edihub, its load generator and pgbench on CPUs $others_half:"
    echo
    bin/edihub-load report -rows "$pinned_rows" -pgbench "$pinned_pgbench"
    echo
  fi
  checkpoints="$(grep -v ': 0 buffers written by checkpoints, 0 autovacuums' "$out/checkpoints.txt" | paste -sd ';' - || true)"
  echo "Checkpoints writing or autovacuum running during the rows (a row with either may be slowed by it): ${checkpoints:-none}."
  echo
  echo '```'
  grep -E '^(Benchmark|cpu:)' "$out/micro.txt"
  [ ! -s "$out/delivery.txt" ] || grep -E '^Benchmark' "$out/delivery.txt"
  echo '```'
} | tee "$out/report.md"
