#!/usr/bin/env bash
# `make profile`: where a request's time goes, on both sides of the wire.
# For each traffic mix it takes a CPU and an allocation profile of the
# server (PROFILING=true) and PostgreSQL's own statistics per statement
# (pg_stat_statements), and prints the top entries of each.
#
# It runs its own PostgreSQL cluster under bin/profile/pg with production
# settings (autovacuum on, pg_stat_statements loaded), so that the shared
# test server is left alone and the statistics start empty.
#
# First it measures the cost of an idle hub: the server's CPU time and
# memory, and the statements PostgreSQL runs for it, with no traffic.
#
# Settings: PROFILE_PGPORT (55433), PROFILE_CLIENTS (16), PROFILE_DURATION
# (10s per mix), PROFILE_WARMUP (2s), PROFILE_PAYLOAD (2048 bytes),
# PROFILE_IDLE (60 seconds of idling), PROFILE_MIXES (the mixes to profile,
# by name: "new duplicate replay batch-100 packet-100 x12-100 edifact-100
# packet-100-again x12-100-again edifact-100-again", all of them; the last
# three send each client's request of 100 again and again, as SAP resends a
# packet, and a partner an interchange, whose acknowledgement was lost).
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$PATH:/usr/local/go/bin"
. scripts/lib.sh

port="${PROFILE_PGPORT:-55433}"
clients="${PROFILE_CLIENTS:-16}"
duration="${PROFILE_DURATION:-10s}"
warmup="${PROFILE_WARMUP:-2s}"
payload_size="${PROFILE_PAYLOAD:-2048}"
idle="${PROFILE_IDLE:-60}"
only_mixes="${PROFILE_MIXES:-}"
out="$PWD/bin/profile"
pg_data="$out/pg"
seconds="${duration%s}"

step() { printf '\n== %s\n' "$*" >&2; }

step "build"
go build -o bin/edihub ./cmd/edihub
go build -o bin/edihub-load ./cmd/edihub-load

step "PostgreSQL cluster in $pg_data on 127.0.0.1:$port"
stop_cluster "$pg_data"
rm -rf "$out"
start_cluster "$pg_data" "$port" shared_preload_libraries=pg_stat_statements \
  autovacuum=on shared_buffers=512MB max_connections=200 pg_stat_statements.track=all

cleanup() {
  stop_server_quietly
  stop_cluster "$pg_data"
}
trap cleanup EXIT

pg_port="$port"
psql_db -d postgres -c "CREATE DATABASE edihub"
psql_db -d edihub -c "CREATE EXTENSION pg_stat_statements"
export DATABASE_URL="postgres://postgres@127.0.0.1:$port/edihub?sslmode=disable"
bench_tenant

step "edihub with PROFILING=true"
metrics_addr="127.0.0.1:$((port + 1))"
start_server "$out/server.log" METRICS_ADDR="$metrics_addr" PROFILING=true

# One row a mix: name, then edihub-load's flags.
mixes=(
  "new:-mix new"
  "duplicate:-mix duplicate"
  "replay:-mix replay"
  "batch-100:-mix new -form batch -per-request 100"
  "packet-100:-mix new -form packet -per-request 100"
  "x12-100:-mix new -form x12 -per-request 100"
  "edifact-100:-mix new -form edifact -per-request 100"
  "packet-100-again:-mix duplicate -form packet -per-request 100"
  "x12-100-again:-mix duplicate -form x12 -per-request 100"
  "edifact-100-again:-mix duplicate -form edifact -per-request 100"
)

report="$out/report.md"
{
  echo "Machine: $(nproc) cores; load average $(cut -d' ' -f1-3 /proc/loadavg) at the start;" \
    "$clients clients, $warmup warm-up, $duration profiled per mix, payload $payload_size bytes."
} >"$report"

# CPU seconds (user + system) a process has used, from /proc/<pid>/stat.
cpu_seconds() {
  awk -v hz="$(getconf CLK_TCK)" '{ printf "%.2f", ($14 + $15) / hz }' "/proc/$1/stat"
}
rss_mib() {
  awk '/^VmRSS/ { printf "%.1f", $2 / 1024 }' "/proc/$1/status"
}
step "idle: ${idle} s without traffic"
psql_db -d edihub -c "SELECT pg_stat_statements_reset()" >/dev/null
before="$(cpu_seconds "$server_pid")"
sleep "$idle"
after="$(cpu_seconds "$server_pid")"
{
  echo
  echo "## idle"
  echo
  echo "Over ${idle} s without traffic: edihub used $(awk -v a="$after" -v b="$before" -v s="$idle" 'BEGIN { printf "%.2f s of CPU (%.2f %% of one core)", a - b, (a - b) * 100 / s }'),"\
    "RSS $(rss_mib "$server_pid") MiB at the end. What PostgreSQL ran for it:"
  echo '```'
  psql -h 127.0.0.1 -p "$port" -U postgres -d edihub -P pager=off -c "
    SELECT calls, round(total_exec_time::numeric, 1) AS total_ms,
           left(regexp_replace(query, '\s+', ' ', 'g'), 90) AS statement
    FROM pg_stat_statements WHERE dbid = (SELECT oid FROM pg_database WHERE datname = 'edihub')
    ORDER BY calls DESC LIMIT 12"
  echo '```'
} >>"$report"

for row in "${mixes[@]}"; do
  name="${row%%:*}"
  [ -z "$only_mixes" ] || [[ " $only_mixes " == *" $name "* ]] || continue
  read -ra flags <<<"${row#*:}"
  step "$name: $clients clients, $duration"
  psql_db -d edihub -c "SELECT pg_stat_statements_reset()" >/dev/null
  curl -fsS "http://$metrics_addr/debug/pprof/allocs" -o "$out/allocs-$name-before.pprof"
  # The profile starts with the warm-up's end and covers the measured time.
  (sleep "${warmup%s}" && curl -fsS "http://$metrics_addr/debug/pprof/profile?seconds=$seconds" \
    -o "$out/cpu-$name.pprof") &
  profiler=$!
  bin/edihub-load run -url "$url" -key "$api_key" "${flags[@]}" -clients "$clients" \
    -warmup "$warmup" -duration "$duration" -payload-size "$payload_size" >"$out/load-$name.json"
  wait "$profiler"
  curl -fsS "http://$metrics_addr/debug/pprof/allocs" -o "$out/allocs-$name.pprof"
  {
    echo
    echo "## $name"
    echo
    echo "Load: $(cat "$out/load-$name.json")"
    echo
    echo "edihub CPU, top 20 functions by own time:"
    echo '```'
    go tool pprof -top -nodecount=20 bin/edihub "$out/cpu-$name.pprof" 2>/dev/null | sed -n '/^Showing\|flat%/,$p'
    echo '```'
    echo "edihub allocations during the mix, top 12 by bytes:"
    echo '```'
    go tool pprof -top -nodecount=12 -sample_index=alloc_space -base "$out/allocs-$name-before.pprof" \
      bin/edihub "$out/allocs-$name.pprof" 2>/dev/null | sed -n '/^Showing\|flat%/,$p'
    echo '```'
    echo "PostgreSQL, statements by total time:"
    echo '```'
    psql -h 127.0.0.1 -p "$port" -U postgres -d edihub -P pager=off -c "
      SELECT calls, round(total_exec_time::numeric, 1) AS total_ms,
             round(mean_exec_time::numeric, 3) AS mean_ms, rows,
             left(regexp_replace(query, '\s+', ' ', 'g'), 90) AS statement
      FROM pg_stat_statements WHERE dbid = (SELECT oid FROM pg_database WHERE datname = 'edihub')
      ORDER BY total_exec_time DESC LIMIT 12"
    echo '```'
  } >>"$report"
done

step "report ($report)"
cat "$report"
