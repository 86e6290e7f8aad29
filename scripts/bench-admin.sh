#!/usr/bin/env bash
# `make bench/admin`: times every admin page on a year of traffic, through
# the real server, for a global admin and a tenant admin (docs/performance.md,
# "Admin pages at a year of traffic").
#
#  1. builds bin/edihub and bin/edihub-load;
#  2. fills the database edihub_bench_admin on the local PostgreSQL with
#     BENCH_ADMIN_MESSAGES messages, the last BENCH_ADMIN_RECENT of them
#     (default none) in the last 7 days, and BENCH_ADMIN_AUDIT_EVENTS audit
#     events generated in SQL (scripts/bench/admin-fill.sql, which ANALYZEs
#     after the first million messages), plus API keys, integrations,
#     destinations with a month of deliveries and the two admins; a
#     database filled with the same counts before is reused as it is (drop
#     it, or BENCH_ADMIN_REFILL=1, to fill again), migrated to the current
#     schema;
#  3. empties the traffic rollups, starts `edihub serve`, times the rollup of
#     the whole year (internal/rollup), and
#     reads each page of scripts/bench/admin-pages.txt once, then
#     BENCH_ADMIN_RUNS times (default 20), as each admin: after a fill with
#     the statistics of its first million messages (stats "small"), then
#     again after an ANALYZE (stats "fresh"), which a reused database has;
#  4. restarts the server with auto_explain in its sessions and reads each
#     page once more, keeping the plan of its slowest statement from the
#     server log (BENCH_ADMIN_PG_LOG, default Debian's log of the newest
#     cluster; the plans are left out when it cannot be read);
#  5. prints the table, fill time and sizes (written to
#     bin/bench-admin/report.md, the plans to bin/bench-admin/plans.md).
#
# Settings: PGHOST, PGPORT (default 127.0.0.1:5432, user postgres), BENCH_ADMIN_DB
# (the database, edihub_bench_admin).
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$PATH:/usr/local/go/bin"
. scripts/lib.sh

pg_host="${PGHOST:-127.0.0.1}"
pg_port="${PGPORT:-5432}"
db="${BENCH_ADMIN_DB:-edihub_bench_admin}"
messages="${BENCH_ADMIN_MESSAGES:-10000000}"
recent="${BENCH_ADMIN_RECENT:-0}"
audit_events="${BENCH_ADMIN_AUDIT_EVENTS:-5000000}"
runs="${BENCH_ADMIN_RUNS:-20}"
pg_log="${BENCH_ADMIN_PG_LOG:-$(ls /var/log/postgresql/postgresql-*-main.log 2>/dev/null | sort -V | tail -n 1)}"
out="${BENCH_ADMIN_OUT:-bin/bench-admin}"
url_base="postgres://postgres@$pg_host:$pg_port/$db?sslmode=disable"
export DATABASE_URL="$url_base"
export EDIHUB_PASSWORD=bench-admin-password
step() { printf '\n== %s\n' "$*" >&2; }

step "build"
mkdir -p "$out"
rm -f "$out"/*.jsonl "$out"/*.log "$out"/*.md "$out"/pages-*.txt
go build -o bin/edihub ./cmd/edihub
go build -o bin/edihub-load ./cmd/edihub-load

filled="$(psql_db -d "$db" -c "SELECT messages || ' ' || recent || ' ' || audit_events FROM bench_fill" 2>/dev/null || true)"
if [ "$filled" != "$messages $recent $audit_events" ] || [ -n "${BENCH_ADMIN_REFILL:-}" ]; then
  step "fill $db: $messages messages ($recent in the last 7 days), $audit_events audit events (minutes)"
  fresh_database "$db"
  bin/edihub migrate 2>/dev/null
  psql -h "$pg_host" -p "$pg_port" -U postgres -d "$db" -q -v messages="$messages" -v recent="$recent" -v audit_events="$audit_events" \
    -f scripts/bench/admin-fill.sql >"$out/fill.log"
  # What admins set up, through the CLI; destinations on a closed local
  # port, paused, so the server never delivers to them.
  export DESTINATION_ALLOWED_CIDRS=127.0.0.0/8
  for tenant in $(psql_db -d "$db" -c "SELECT slug FROM tenants ORDER BY slug"); do
    bin/edihub apikey create --tenant "$tenant" --env production --name bench >/dev/null
    bin/edihub integration create --tenant "$tenant" --env production --message-type SHOP_ORDER --scheme github >/dev/null
    bin/edihub destination create --tenant "$tenant" --env production --url "http://127.0.0.1:9/$tenant" >/dev/null
  done
  psql_db -d "$db" -f scripts/bench/admin-deliveries.sql >>"$out/fill.log"
  bin/edihub user create --email global@bench.example --role admin >/dev/null
  bin/edihub user create --email acme@bench.example --role admin --tenant acme >/dev/null
fi
bin/edihub migrate 2>/dev/null

step "server; the traffic rollup catches up"
# Retention off: the fill's year would otherwise be swept while the pages
# are timed, and the sweep's statements would be timed with them.
retention_off=(RETENTION_MESSAGES=off RETENTION_AUDIT_EVENTS=off RETENTION_BLOCKED_COPIES=off RETENTION_DELIVERY_ATTEMPTS=off)
trap stop_server_quietly EXIT
# Every run times the rollup of the whole year from scratch.
psql_db -d "$db" -c "TRUNCATE traffic_messages_hourly, traffic_blocked_hourly" \
  -c "UPDATE traffic_rollup_state SET rolled_up_to = '-infinity'"
rollup_start="$(date +%s.%N)"
start_server "$out/server.log" DATABASE_URL="$url_base" "${retention_off[@]}"
# The rollup leaves the last ADMIN_REQUEST_TIMEOUT (60 s) to the next step.
until [ "$(psql_db -d "$db" -c "SELECT rolled_up_to > now() - interval '3 minutes' FROM traffic_rollup_state")" = t ]; do
  sleep 1
done
rollup_s="$(awk -v a="$rollup_start" -v b="$(date +%s.%N)" 'BEGIN { printf "%.0f", b - a }')"

# The pages name rows of the fill by id; acme's are the tenant admin's.
read -r message_id blocked_id type_id docnum key fingerprint < <(psql_db -d "$db" -F ' ' -c "
  SELECT m.id, (SELECT max(c.id) FROM blocked_copies c WHERE c.tenant_id = t.id AND c.dismissed_at IS NULL),
         m.message_type_id, m.docnum, k.value, e.match_key
  FROM tenants t
  CROSS JOIN LATERAL (SELECT e.message_id, e.match_key FROM audit_events e
                      WHERE e.tenant_id = t.id AND e.action = 'message.duplicate_blocked'
                      ORDER BY e.created_at DESC LIMIT 1) e
  JOIN messages m ON m.id = e.message_id
  JOIN message_key_values k ON k.message_id = m.id
  WHERE t.slug = 'acme'")
for user in global acme; do
  tenant_filter=""
  [ "$user" = global ] && tenant_filter='tenant=acme\&'
  sed -e "s/{message}/$message_id/; s/{blocked}/$blocked_id/; s/{type}/$type_id/; s/{docnum}/$docnum/" \
      -e "s/{key}/$key/; s/{fingerprint}/$fingerprint/; s/{tenant}/$tenant_filter/" \
      scripts/bench/admin-pages.txt >"$out/pages-$user.txt"
done
# time_pages reads every page as each admin, labelling the timings with the
# statistics PostgreSQL plans with ($1).
time_pages() {
  step "pages, statistics $1: one unmeasured read, then $runs measured, as each admin"
  for user in global acme; do
    bin/edihub-load admin -url "$url" -email "$user@bench.example" -password "$EDIHUB_PASSWORD" -user "$user" \
      -pages "$out/pages-$user.txt" -runs "$runs" | jq -c --arg stats "$1" '. + {stats: $stats}' >>"$out/timings.jsonl"
  done
}
if [ "$(psql_db -d "$db" -c "SELECT stats FROM bench_fill")" = small ]; then
  time_pages small
  step "ANALYZE"
  analyze_start="$(date +%s.%N)"
  psql_db -d "$db" -c ANALYZE
  psql_db -d "$db" -c "UPDATE bench_fill SET stats = 'fresh', analyze_s = $(awk -v a="$analyze_start" -v b="$(date +%s.%N)" 'BEGIN { print b - a }')"
fi
time_pages fresh
stop_server

if [ -r "$pg_log" ]; then
  step "plans: each page once more with auto_explain, from $pg_log"
  explain_url="$url_base&options=$(printf %s '-c session_preload_libraries=auto_explain -c auto_explain.log_min_duration=0 -c auto_explain.log_analyze=on -c auto_explain.log_buffers=on' | jq -sRr @uri)"
  start_server "$out/server-explain.log" DATABASE_URL="$explain_url" "${retention_off[@]}"
  for user in global acme; do
    bin/edihub-load admin -url "$url" -email "$user@bench.example" -password "$EDIHUB_PASSWORD" -user "$user" \
      -pages "$out/pages-$user.txt" -explain-log "$pg_log" -explain-db "$db" >>"$out/plans.jsonl" 2>/dev/null
  done
  stop_server
fi

step "report"
{
  echo "Machine: $(nproc) cores, $(free -g | awk '/^Mem:/ {print $2}') GiB;" \
    "$(psql_db -d postgres -c 'SHOW server_version' | head -n 1) (autovacuum $(psql_db -d postgres -c 'SHOW autovacuum'));" \
    "load average $(cut -d' ' -f1-3 /proc/loadavg) when the report was written."
  echo
  psql_db -d "$db" -F ' ' -c "SELECT messages, recent, audit_events, round(messages_s), round(audit_s), round(analyze_s) FROM bench_fill" |
    { read -r m r a ms as an; echo "Fill: $m messages ($r of them in the last 7 days) in ${ms} s (with their key values), $a audit events and their blocked copies in ${as} s, ANALYZE ${an:-–} s; the rollup of the whole year ${rollup_s} s (at most 1 s of it waiting for the poll)."; }
  echo
  echo "Sizes: database $(psql_db -d "$db" -c "SELECT pg_size_pretty(pg_database_size('$db'))");" \
    "$(psql_db -d "$db" -c "SELECT string_agg(c.relname || ' ' || pg_size_pretty(pg_total_relation_size(c.oid)), ', ' ORDER BY pg_total_relation_size(c.oid) DESC)
       FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
       WHERE n.nspname = 'public' AND c.relkind IN ('r', 'p') AND pg_total_relation_size(c.oid) > 1e6")."
  echo
  echo "| page | statistics | path (global admin) | global median ms | global p95 ms | acme admin median ms | acme p95 ms |"
  echo "|---|---|---|--:|--:|--:|--:|"
  jq -rs 'group_by([.page, .stats])[] | (map(select(.user == "global"))[0] // {}) as $g | (map(select(.user == "acme"))[0] // {}) as $a
          | def r: if . == null then "–" else (. * 10 | round / 10) end;
          "| \(.[0].page) | \(.[0].stats) | `\($g.path // $a.path)` | \($g.median_ms | r) | \($g.p95_ms | r) | \($a.median_ms | r) | \($a.p95_ms | r) |"' \
    "$out/timings.jsonl"
  jq -r 'select(.status != 200) | "\nNOT 200: \(.user) \(.page) \(.path): \(.status)"' "$out/timings.jsonl"
} | tee "$out/report.md"
if [ -s "$out/plans.jsonl" ]; then
  jq -r '"### \(.user) \(.page) `\(.path)`\n\n```\n\(.plan)\n```\n"' "$out/plans.jsonl" >"$out/plans.md"
  echo "plans: $out/plans.md" >&2
fi
