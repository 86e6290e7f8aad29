#!/usr/bin/env bash
# Compares edihub builds on single-message requests, alternately, with
# pgbench's single-row insert in every round: on a machine shared with other
# work, only rows measured side by side are comparable (docs/performance.md,
# "Group commit").
#
#   scripts/bench-compare.sh ROUNDS LABEL=BINARY[,NAME=VALUE...] ...
#
# e.g. scripts/bench-compare.sh 4 old=/tmp/edihub-main new=bin/edihub
#      scripts/bench-compare.sh 2 lanes1=bin/edihub,GROUP_COMMIT=1 lanes2=bin/edihub,GROUP_COMMIT=2
#
# Each round starts each build in turn (with the NAME=VALUE settings given,
# in the order given in odd rounds and reversed in even ones)
# against one database, edihub_compare (re-created by this script), runs
# bin/edihub-load's new and duplicate mixes at each client count, and then
# pgbench with scripts/bench/insert.sql at the same counts. A row is one JSON
# line on stdout: requests/s, p50 and p99, and the CPU time per request of
# the edihub process and of its PostgreSQL backends (from /proc, over the
# measured seconds), which other work on the machine disturbs less than
# throughput; groups is the mean group commit size (edihub_ingest_group_size,
# when the build has it). Every row starts with a VACUUM and a CHECKPOINT,
# as make bench's do (docs/performance.md, method step 5). Settings:
# PGHOST, PGPORT (the server, 127.0.0.1:5432; make bench's cluster when
# it runs: 55434), COMPARE_CLIENTS ("16 64"), COMPARE_MIXES
# ("new duplicate"), COMPARE_SECONDS (8), COMPARE_METRICS_ADDR
# (127.0.0.1:9477), COMPARE_LOAD_FLAGS (more edihub-load run flags, e.g.
# "-form batch -per-request 100": a row's requests then carry that many
# messages each, and its CPU times are per request).
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$PATH:/usr/local/go/bin"
. scripts/lib.sh

rounds="$1"
shift
clients="${COMPARE_CLIENTS:-16 64}"
mixes="${COMPARE_MIXES:-new duplicate}"
seconds="${COMPARE_SECONDS:-8}"
read -r -a load_flags <<<"${COMPARE_LOAD_FLAGS:-}"
metrics_addr="${COMPARE_METRICS_ADDR:-127.0.0.1:9477}"
db=edihub_compare
out=bin/compare
pg_host="${PGHOST:-127.0.0.1}"
pg_port="${PGPORT:-5432}"
export DATABASE_URL="postgres://postgres@$pg_host:$pg_port/$db?sslmode=disable"
mkdir -p "$out"
go build -o bin/edihub ./cmd/edihub
go build -o bin/edihub-load ./cmd/edihub-load

fresh_database "$db"
bench_tenant
ticks="$(getconf CLK_TCK)"

# cpu_ticks prints the user and system ticks the processes $@ have used.
cpu_ticks() {
  local total=0 pid
  for pid in "$@"; do
    [ -r "/proc/$pid/stat" ] && total=$((total + $(awk '{print $14 + $15}' "/proc/$pid/stat")))
  done
  echo "$total"
}
backends() { psql_db -d postgres -c "SELECT pid FROM pg_stat_activity WHERE datname = '$db' AND pid <> pg_backend_pid()"; }
groups() { curl -fsS "http://$metrics_addr/metrics" 2>/dev/null | awk '/^edihub_ingest_group_size_(sum|count) / {printf "%s ", $2}'; }

trap stop_server_quietly EXIT
variants=("$@")
for round in $(seq 1 "$rounds"); do
  # Where a build runs in its round moved its rows by more than builds
  # differ (second was slower in some runs and faster in others, whichever
  # build it was), so every other round measures them in the reverse order.
  mapfile -t order < <(round_order "$round" "${variants[@]}")
  for variant in "${order[@]}"; do
    label="${variant%%=*}"
    IFS=, read -r -a parts <<<"${variant#*=}"
    binary="${parts[0]}"
    env "${parts[@]:1}" METRICS_ADDR="$metrics_addr" LISTEN_ADDR=127.0.0.1:0 "$binary" serve 2>"$out/server-$label.log" &
    server_pid=$!
    url="http://$(edihub_address "$out/server-$label.log")"
    for mix in $mixes; do
      for c in $clients; do
        load() { bin/edihub-load run -url "$url" -key "$api_key" -mix "$mix" -clients "$c" -warmup 0s -payload-size 2048 "${load_flags[@]}" "$@" 2>/dev/null; }
        load -duration 2s >/dev/null # warm-up: connections, prepared statements
        start_clean
        read -r gsum0 gcount0 _ <<<"$(groups) 0 0"
        edihub0="$(cpu_ticks "$server_pid")" pg0="$(cpu_ticks $(backends))"
        row="$(load -duration "${seconds}s")"
        edihub1="$(cpu_ticks "$server_pid")" pg1="$(cpu_ticks $(backends))"
        read -r gsum1 gcount1 _ <<<"$(groups) 0 0"
        jq -c --arg build "$label" --argjson round "$round" --argjson ticks "$ticks" \
          --argjson edihub "$((edihub1 - edihub0))" --argjson pg "$((pg1 - pg0))" \
          --argjson gsum "$(echo "$gsum1 - $gsum0" | bc)" --argjson gcount "$(echo "$gcount1 - $gcount0" | bc)" \
          --arg load "$(cut -d' ' -f1 /proc/loadavg)" \
          '{round: $round, build: $build, mix, clients, rps: (.rps | floor), p50_ms: (.p50_ms * 10 | floor / 10),
            p99_ms: (.p99_ms * 10 | floor / 10), errors, edihub_us: ($edihub / $ticks * 1e6 / .requests | floor),
            postgres_us: ($pg / $ticks * 1e6 / .requests | floor),
            groups: (if $gcount > 0 then ($gsum / $gcount * 10 | floor / 10) else null end), load: $load}' <<<"$row"
      done
    done
    stop_server
  done
  for c in $clients; do
    args=(2048 -c "$c" -j 2 -f scripts/bench/insert.sql)
    pgbench_insert "${args[@]}" -T 2 >/dev/null 2>&1
    tps="$(pgbench_insert "${args[@]}" -T "$seconds" 2>/dev/null | sed -n 's/^tps = \([0-9.]*\).*/\1/p')"
    jq -nc --argjson round "$round" --argjson c "$c" --argjson tps "${tps:-0}" --arg load "$(cut -d' ' -f1 /proc/loadavg)" \
      '{round: $round, build: "pgbench", clients: $c, rps: ($tps | floor), load: $load}'
  done
done
