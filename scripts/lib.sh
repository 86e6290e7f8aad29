# Functions the scripts share; sourced, not run.

# as_root runs a package installation, which needs root.
as_root() {
  if [ "$(id -u)" = 0 ]; then "$@"; else sudo "$@"; fi
}

# as_postgres runs a PostgreSQL server binary as the owner of a
# project-local cluster: PostgreSQL refuses to run as root.
as_postgres() {
  if [ "$(id -u)" = 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi
}

# pg_bindir prints the directory of the newest installed PostgreSQL server
# binaries (initdb, pg_ctl), or nothing: Debian keeps them out of PATH.
pg_bindir() {
  if command -v pg_config >/dev/null && [ -x "$(pg_config --bindir)/initdb" ]; then
    pg_config --bindir
  else
    ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1
  fi
}

# start_cluster DIR PORT [SETTING...] makes a PostgreSQL cluster of its own
# in DIR, anew (one left there by an earlier run is stopped and removed),
# with the installed binaries, and starts it on 127.0.0.1:PORT with each
# SETTING (name=value) on the server's command line; its log is
# DIR/postgres.log. stop_cluster DIR stops it, if it runs.
start_cluster() {
  local dir="$1" port="$2" bin settings=() s
  shift 2
  bin="$(pg_bindir)"
  [ -n "$bin" ] && [ -x "$bin/initdb" ] || { echo "no PostgreSQL server binaries (initdb, pg_ctl): install Debian's postgresql" >&2; return 1; }
  stop_cluster "$dir"
  rm -rf "$dir"
  mkdir -p "$dir"
  [ "$(id -u)" != 0 ] || chown postgres "$dir"
  as_postgres "$bin/initdb" -D "$dir" -U postgres --auth=trust >/dev/null
  for s in "$@"; do settings+=(-c "$s"); done
  as_postgres "$bin/pg_ctl" -D "$dir" -l "$dir/postgres.log" -w \
    -o "-p $port -k $dir -c listen_addresses=127.0.0.1 ${settings[*]}" start >/dev/null
}
stop_cluster() {
  [ ! -f "$1/postmaster.pid" ] || as_postgres "$(pg_bindir)/pg_ctl" -D "$1" -m fast stop >/dev/null 2>&1 || true
}

# edihub_address waits for the `edihub serve` logging to file $1 to answer
# /readyz and prints the address it listens on; after 10 s it shows the
# log and fails.
edihub_address() {
  local addr
  for _ in $(seq 1 100); do
    addr="$(sed -n 's/.*msg=listening addr=\([^ ]*\).*/\1/p' "$1" | head -n 1)"
    if [ -n "$addr" ] && curl -fsS "http://$addr/readyz" >/dev/null 2>&1; then
      echo "$addr"
      return 0
    fi
    sleep 0.1
  done
  echo "edihub did not start; its log:" >&2
  cat "$1" >&2
  return 1
}

# psql_db runs psql as postgres on $pg_host:$pg_port (127.0.0.1:5432 when
# unset), quietly, unaligned, stopping at the first error.
psql_db() { psql -h "${pg_host:-127.0.0.1}" -p "${pg_port:-5432}" -U postgres -v ON_ERROR_STOP=1 -qtA "$@"; }

# fresh_database drops database $1 if it exists and creates it empty.
fresh_database() {
  psql_db -d postgres -c "DROP DATABASE IF EXISTS $1 WITH (FORCE)"
  psql_db -d postgres -c "CREATE DATABASE $1"
}

# bench_tenant migrates the database DATABASE_URL names and gives it the
# tenant bench with the environment production, an API key (into api_key)
# and the type ORDERS05 keyed by its order number (ids into tenant_id,
# env_id and mt_id): what the benchmarks send their load to. The types 850
# and ORDERS, keyed by their order numbers too, take the X12 and EDIFACT
# interchanges of edihub-load's forms x12 and edifact.
bench_tenant() {
  bin/edihub migrate 2>/dev/null
  bin/edihub tenant create bench >/dev/null
  bin/edihub env create --tenant bench production >/dev/null
  api_key="$(bin/edihub apikey create --tenant bench --env production --name bench | head -n 1)"
  mt_id="$(bin/edihub message-type create --tenant bench ORDERS05 --fields '["*.IDOC.E1EDK01.BELNR"]' | head -n 1)"
  bin/edihub message-type create --tenant bench 850 --fields '["BEG.0.BEG03"]' >/dev/null
  bin/edihub message-type create --tenant bench ORDERS --fields '["BGM.0.BGM02"]' >/dev/null
  read -r tenant_id env_id < <(psql "$DATABASE_URL" -v ON_ERROR_STOP=1 -qtA -F ' ' -c \
    "SELECT t.id, e.id FROM tenants t JOIN environments e ON e.tenant_id = t.id WHERE t.slug = 'bench'")
}

# round_order ROUND ITEM... prints the items one a line, in the order given
# in odd rounds and reversed in even ones: where a run stands in its round
# moves its numbers (the table, the WAL and the checkpoints that the runs
# before it left behind, and the machine's speed, which moves by the
# minute), so scripts that compare runs alternate their order.
round_order() {
  local round="$1" i
  shift
  if [ $((round % 2)) -eq 1 ]; then
    printf '%s\n' "$@"
  else
    for ((i = $#; i >= 1; i--)); do printf '%s\n' "${!i}"; done
  fi
}

# start_clean vacuums and checkpoints database $db before a measured row
# (edihub's, the floor's or pgbench's), so that it starts with no dirty
# pages, no WAL of the row before it and no table autovacuum is due on: a
# row run after the batch floor's (a gigabyte of WAL in 20 s, which starts
# a checkpoint) otherwise paid for its writes and for the full-page images
# that follow it, and a row during which autovacuum started on the
# millions of rows the rows before had inserted paid for that scan, so that
# which row followed which decided the comparison more than the code did
# (docs/performance.md, method step 5).
start_clean() {
  psql_db -d "$db" -c VACUUM
  psql_db -d "$db" -c CHECKPOINT
}

# pgbench_insert runs pgbench against database $db as postgres on
# $pg_host:$pg_port with the bench tenant's ids and an insert payload of $1
# bytes (the one edihub-load sends) as the variables of scripts/bench/*.sql;
# the other arguments are pgbench's (clients, script, duration). Needs
# bench_tenant first.
pgbench_insert() {
  local payload
  payload="$(bin/edihub-load payload -size "$1")"
  shift
  "$(pg_bindir)/pgbench" -h "${pg_host:-127.0.0.1}" -p "${pg_port:-5432}" -U postgres -n -M prepared \
    -D "tenant=$tenant_id" -D "env=$env_id" -D "mt=$mt_id" -D "payload=$payload" \
    -D "hash=$(printf '%s' "$payload" | sha256sum | cut -d' ' -f1)" "$@" "$db"
}

# start_server starts `edihub serve` on a free local port, logging to file
# $1, with the environment assignments that follow (NAME=value ...); it
# sets server_pid and url once the server answers. stop_server stops it
# and waits; stop_server_quietly is for an EXIT trap.
server_pid=""
start_server() {
  local log="$1"
  shift
  env "$@" LISTEN_ADDR=127.0.0.1:0 bin/edihub serve 2>"$log" &
  server_pid=$!
  url="http://$(edihub_address "$log")" || exit 1
}
# start_floor starts edihub-load's floor (floor.Floor: net/http and the
# insert pgbench runs, nothing else) for the bench tenant, as start_server
# starts edihub; stop_server stops it. Needs bench_tenant first.
start_floor() {
  bin/edihub-load floor -tenant "$tenant_id" -env "$env_id" -message-type "$mt_id" 2>"$1" &
  server_pid=$!
  url="http://$(edihub_address "$1")" || exit 1
}
stop_server() {
  kill -TERM "$server_pid"
  wait "$server_pid" || true
  server_pid=""
}
stop_server_quietly() {
  [ -z "$server_pid" ] || kill -TERM "$server_pid" 2>/dev/null || true
}

# perf_sample FILE starts perf on every core, $frequency samples a second,
# for $seconds after a 3 s delay (the middle of an edihub-load row measured
# for $seconds + 4 after its warm-up), in the background; perf_pid is what
# to wait for.
perf_sample() {
  (sleep 3 && perf record -F "$frequency" -a -g -o "$1" -- sleep "$seconds" >/dev/null 2>&1) &
  perf_pid=$!
}
# row_rate JSON is the messages a second of an edihub-load row's answer.
row_rate() {
  sed -n 's/.*"messages_per_second":\([0-9.]*\).*/\1/p' "$1"
}
# perf_per_message FILE RATE prints "name µs" lines from perf_sample's FILE
# at RATE messages a second: the CPU a message of every process, as
# "process:NAME" (swapper is the idle cores), and of every function on the
# stack of PostgreSQL's samples, counted once a sample (a sample is
# 1/frequency s of one core). PostgreSQL's exported functions are in its
# dynamic symbol table, so no debug symbols are needed; its static ones
# show as [unknown].
perf_per_message() {
  perf script -i "$1" -F comm,ip,sym 2>/dev/null | awk -v rate="$2" -v frequency="$frequency" -v seconds="$seconds" '
    function flush() {
      if (comm == "") return
      cpu[comm]++
      if (comm == "postgres") for (f in seen) hit[f]++
      delete seen
    }
    BEGIN { us = 1000000 / frequency / (rate * seconds) }
    /^[^ \t]/ { flush(); comm = $1; next }
    NF == 0 { flush(); comm = ""; next }
    { seen[$2] = 1 }
    END {
      flush()
      for (c in cpu) printf "process:%s %.2f\n", c, cpu[c] * us
      for (f in hit) printf "%s %.2f\n", f, hit[f] * us
    }'
}
