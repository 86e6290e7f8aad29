#!/usr/bin/env bash
# `make profile/system`: where the CPU of the whole machine goes, per
# message, while edihub is driven and then while pgbench runs the insert it
# is compared with (docs/performance.md, "Where the cores go, by perf").
#
# It samples every process with perf (Debian's linux-perf, software clock
# events, so it works in virtual machines without hardware counters) for
# PERF_SECONDS in the middle of a measured edihub-load row, and again in the
# middle of pgbench's scripts/bench/insert.sql at the same client count, on
# the local PostgreSQL in a fresh database edihub_perf. It prints the CPU per
# message of each process (edihub, PostgreSQL, the load generator or
# pgbench) and, for PostgreSQL, of the parts of its work named below, as µs
# per message: PostgreSQL's exported functions are in its dynamic symbol
# table, so no debug symbols are needed.
#
#   scripts/profile-system.sh [edihub-load run flags]   (default: -mix new)
#
# Settings: PGHOST, PGPORT (127.0.0.1:5432), PERF_CLIENTS (16),
# PERF_SECONDS (6), PERF_FREQUENCY (499 samples a second per core).
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$PATH:/usr/local/go/bin"
. scripts/lib.sh

pg_host="${PGHOST:-127.0.0.1}"
pg_port="${PGPORT:-5432}"
clients="${PERF_CLIENTS:-16}"
seconds="${PERF_SECONDS:-6}"
frequency="${PERF_FREQUENCY:-499}"
db=edihub_perf
out=bin/perf
export DATABASE_URL="postgres://postgres@$pg_host:$pg_port/$db?sslmode=disable"
[ "$#" -gt 0 ] || set -- -mix new
command -v perf >/dev/null || { echo "perf not found: apt-get install linux-perf" >&2; exit 1; }

mkdir -p "$out"
go build -o bin/edihub ./cmd/edihub
go build -o bin/edihub-load ./cmd/edihub-load
fresh_database "$db"
bench_tenant
trap stop_server_quietly EXIT

start_server "$out/server.log"
measure=(-clients "$clients" -warmup 2s -duration "$((seconds + 4))s")
bin/edihub-load run -url "$url" -key "$api_key" "$@" "${measure[@]}" >/dev/null 2>&1 # warms the caches and plans
perf_sample "$out/edihub.data"
bin/edihub-load run -url "$url" -key "$api_key" "$@" "${measure[@]}" >"$out/edihub.json" 2>/dev/null
wait "$perf_pid"
stop_server
edihub_rate="$(row_rate "$out/edihub.json")"

perf_sample "$out/pgbench.data"
pgbench_insert 2048 -c "$clients" -j "$((clients < 2 ? clients : 2))" -T "$((seconds + 6))" \
  -f scripts/bench/insert.sql >"$out/pgbench.txt" 2>&1
wait "$perf_pid"
pgbench_rate="$(sed -n 's/^tps = \([0-9.]*\).*/\1/p' "$out/pgbench.txt")"

# per_message FILE RATE prints "name µs" lines: the CPU per message of each
# process that matters here (swapper is the idle cores), then of
# PostgreSQL's samples whose stack holds each function named.
per_message() {
  perf_per_message "$1" "$2" | awk '
    BEGIN {
      n = split("PortalRun standard_ExecutorStart ExecInitModifyTable ExecConstraints AfterTriggerEndQuery " \
        "ExecInsertIndexTuples heap_insert toast_compress_datum array_recv pg_parse_json CommitTransactionCommand " \
        "XLogFlush __send", part, " ")
    }
    { us[$1] = $2 }
    END {
      split("edihub edihub-load pgbench postgres swapper", shown, " ")
      for (i = 1; i <= 5; i++) printf "%s %.0f\n", shown[i], us["process:" shown[i]]
      for (i = 1; i <= n; i++) printf "postgres:%s %.0f\n", part[i], us[part[i]]
    }'
}

per_message "$out/edihub.data" "$edihub_rate" >"$out/edihub-cpu.txt"
per_message "$out/pgbench.data" "$pgbench_rate" >"$out/pgbench-cpu.txt"
printf '%s: %.0f messages/s; pgbench: %.0f inserts/s; %s clients, %s s sampled each\n' \
  "$*" "$edihub_rate" "$pgbench_rate" "$clients" "$seconds"
printf '%-40s %12s %12s\n' "CPU µs per message (pgbench: per insert)" edihub pgbench
awk 'NR == FNR { pgbench[$1] = $2; next } { printf "%-40s %12s %12s\n", $1, $2, pgbench[$1] }' \
  "$out/pgbench-cpu.txt" "$out/edihub-cpu.txt"
