#!/usr/bin/env bash
# `make profile/postgres`: where PostgreSQL's time for a message goes under
# edihub beside under the batch floor (floor.Floor), function by function
# (docs/performance.md, "Where a batch message's PostgreSQL time goes").
#
# It starts edihub and the floor on one fresh database edihub_perf on the
# local PostgreSQL, then runs the same edihub-load row against each in turn,
# ROUNDS times (floor first in odd rounds, edihub first in even ones), each
# after a CHECKPOINT, sampling every process with perf for PERF_SECONDS in
# the middle of the row. It prints, in µs per message averaged over the
# rounds, the CPU of edihub, the floor's process (edihub-load floor, which
# includes the load generator's own), PostgreSQL, and each PostgreSQL
# function on the stack of PostgreSQL's samples (inclusive, see
# perf_per_message in scripts/lib.sh), the largest differences first.
#
#   scripts/profile-postgres.sh [edihub-load run flags]
#       (default: -mix new -form batch -per-request 100)
#
# Settings: PGHOST, PGPORT (127.0.0.1:5432), PERF_CLIENTS (16),
# PERF_SECONDS (6), PERF_FREQUENCY (999), ROUNDS (2), PERF_TOP (40 lines).
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$PATH:/usr/local/go/bin"
. scripts/lib.sh

pg_host="${PGHOST:-127.0.0.1}"
pg_port="${PGPORT:-5432}"
clients="${PERF_CLIENTS:-16}"
seconds="${PERF_SECONDS:-6}"
frequency="${PERF_FREQUENCY:-999}"
rounds="${ROUNDS:-2}"
top="${PERF_TOP:-40}"
db=edihub_perf
out=bin/perf-postgres
export DATABASE_URL="postgres://postgres@$pg_host:$pg_port/$db?sslmode=disable"
[ "$#" -gt 0 ] || set -- -mix new -form batch -per-request 100
command -v perf >/dev/null || { echo "perf not found: apt-get install linux-perf" >&2; exit 1; }

rm -rf "$out" && mkdir -p "$out"
go build -o bin/edihub ./cmd/edihub
go build -o bin/edihub-load ./cmd/edihub-load
fresh_database "$db"
bench_tenant

start_server "$out/edihub.log"
edihub_url="$url" edihub_pid="$server_pid"
start_floor "$out/floor.log"
floor_url="$url" floor_pid="$server_pid"
trap 'kill "$edihub_pid" "$floor_pid" 2>/dev/null || true' EXIT

for round in $(seq 1 "$rounds"); do
  order="floor edihub"
  [ $((round % 2)) -eq 1 ] || order="edihub floor"
  for who in $order; do
    target="$edihub_url"
    [ "$who" = edihub ] || target="$floor_url"
    psql_db -d "$db" -c CHECKPOINT
    perf_sample "$out/$who-$round.data"
    bin/edihub-load run -url "$target" -key "$api_key" "$@" -clients "$clients" -warmup 2s \
      -duration "$((seconds + 4))s" >"$out/$who-$round.json" 2>/dev/null
    wait "$perf_pid"
    rate="$(row_rate "$out/$who-$round.json")"
    printf 'round %s: %s %.0f messages/s\n' "$round" "$who" "$rate"
    perf_per_message "$out/$who-$round.data" "$rate" |
      awk '!/^process:/ || /^process:(edihub|edihub-load|postgres) /' >"$out/$who-$round.txt"
  done
done

# The mean over the rounds of each line, floor beside edihub, largest
# difference first; the processes lead.
printf '\n%-48s %10s %10s %10s\n' "CPU µs a message ($*)" floor edihub difference
mean() { cat "$out/$1"-*.txt | awk -v n="$rounds" '{ sum[$1] += $2 } END { for (k in sum) printf "%s %.2f\n", k, sum[k] / n }' | sort; }
join -a1 -a2 -e 0 -o 0,1.2,2.2 <(mean floor) <(mean edihub) |
  awk '{ d = $3 - $2; printf "%d %-48s %10.2f %10.2f %10.2f\n", ($1 ~ /^process:/), $1, $2, $3, d }' |
  sort -k1,1nr -k5,5gr | cut -d' ' -f2- | awk -v top="$top" '/^process:/ || ++shown <= top'
