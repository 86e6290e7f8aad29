#!/usr/bin/env bash
# A local high-availability formation of PostgreSQL, managed by
# pg_auto_failover: a monitor and three nodes with synchronous replication,
# each a pg_autoctl service of its own, as each would run on its own machine.
# The primary's commits wait for either standby (synchronous_standby_names
# ANY 1), so that with one node lost, whichever it is, every commit is
# still on two machines and writes go on.
#
#   scripts/ha.sh up DIR [PORT]   create (when new) and start the formation under
#                                 DIR: the monitor on PORT (default 15440), the
#                                 nodes on PORT+1 to PORT+3; prints the
#                                 DATABASE_URL that lists the three nodes
#   scripts/ha.sh url DIR         print that DATABASE_URL again
#   scripts/ha.sh state DIR       the monitor's view: each node's state
#   scripts/ha.sh lose DIR NODE   kill node1, node2 or node3 as a lost machine would
#                                 stop: its pg_autoctl and its postmaster at once
#   scripts/ha.sh back DIR NODE   start a lost node's pg_autoctl again; it
#                                 rejoins as a standby
#   scripts/ha.sh switchover DIR  a planned switchover (pg_autoctl perform switchover)
#   scripts/ha.sh down DIR        stop every service of the formation
#
# The monitor and the keepers are tuned to fail over in seconds rather than
# the defaults' half a minute (docs/operations.md, "High availability").
# Missing pg_autoctl is installed first (scripts/prerequisites.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/lib.sh

say() { echo "ha.sh: $*" >&2; }
fail() {
  say "$*"
  exit 1
}

[ $# -ge 2 ] || fail "usage: scripts/ha.sh up|url|state|lose|back|switchover|down DIR [PORT|NODE]"
cmd=$1 dir=$(realpath -m "$2")
shift 2

scripts/prerequisites.sh postgresql autofailover >&2
bin="$(pg_bindir)"
export PATH="$bin:$PATH"
# pg_autoctl runs each service as the owner of its data directory, which
# PostgreSQL requires not to be root.
as_owner() { as_postgres env PATH="$PATH" XDG_CONFIG_HOME="$dir/config" XDG_DATA_HOME="$dir/share" "$@"; }

ports_file="$dir/port"
port() { # which: monitor, node1, node2 or node3
  local base
  base=$(cat "$ports_file")
  case $1 in monitor) echo "$base" ;; node1) echo $((base + 1)) ;; node2) echo $((base + 2)) ;; node3) echo $((base + 3)) ;; esac
}
monitor_url() { echo "postgres://autoctl_node@127.0.0.1:$(port monitor)/pg_auto_failover?sslmode=disable"; }
database_url() {
  echo "postgres://postgres@127.0.0.1:$(port node1),127.0.0.1:$(port node2),127.0.0.1:$(port node3)/edihub?sslmode=disable&target_session_attrs=read-write&connect_timeout=2"
}
monitor_sql() { psql -h 127.0.0.1 -p "$(port monitor)" -U autoctl_node -d pg_auto_failover -qtA -v ON_ERROR_STOP=1 -c "$1"; }

# service starts the pg_autoctl service of one member in the background,
# its output in DIR/NAME.log and its pid in DIR/NAME.pid.
service() { # name
  local name=$1
  if [ -f "$dir/$name.pid" ] && kill -0 "$(cat "$dir/$name.pid")" 2>/dev/null; then
    return
  fi
  as_owner setsid pg_autoctl run --pgdata "$dir/$name" >>"$dir/$name.log" 2>&1 &
  echo $! >"$dir/$name.pid"
}

# wait_for prints nothing and returns when the monitor reports, for every
# node, one of the states in the pattern, or fails after 120 seconds.
wait_for() { # pattern count
  local i states
  for i in $(seq 1 240); do
    states=$(monitor_sql "SELECT string_agg(reportedstate::text, ' ' ORDER BY nodeid) FROM pgautofailover.node" 2>/dev/null || true)
    if [ "$(grep -cE "$1" <<<"${states// /$'\n'}" || true)" -ge "$2" ]; then
      return
    fi
    sleep 0.5
  done
  fail "the formation did not reach $1 (states: ${states:-none}); see $dir/*.log"
}

create_node() { # name
  local name=$1
  as_owner pg_autoctl create postgres --pgdata "$dir/$name" --pgport "$(port "$name")" \
    --hostname 127.0.0.1 --listen 127.0.0.1 --name "$name" --dbname edihub --auth trust --no-ssl \
    --monitor "$(monitor_url)" --pgctl "$bin/pg_ctl" >>"$dir/$name.log" 2>&1
  # Keepers give up on a silent peer or monitor after seconds, not the
  # default 20, and promote a standby without waiting for its WAL receiver
  # longer than a second.
  as_owner pg_autoctl config set --pgdata "$dir/$name" timeout.network_partition_timeout 2 >/dev/null
  as_owner pg_autoctl config set --pgdata "$dir/$name" timeout.prepare_promotion_walreceiver 1 >/dev/null
  as_owner pg_autoctl config set --pgdata "$dir/$name" timeout.prepare_promotion_catchup 10 >/dev/null
  as_owner pg_autoctl config set --pgdata "$dir/$name" timeout.postgresql_restart_failure_timeout 5 >/dev/null
}

up() {
  # The default ports lie below Linux's range of ephemeral ports
  # (32768-60999), where a busy machine's outgoing connections could hold
  # one when a node starts and keep it from listening.
  local base=${1:-15440}
  mkdir -p "$dir/config" "$dir/share"
  [ -f "$ports_file" ] || echo "$base" >"$ports_file"
  chown -R postgres "$dir" 2>/dev/null || true
  if [ ! -d "$dir/monitor" ]; then
    say "creating the monitor on port $(port monitor)"
    as_owner pg_autoctl create monitor --pgdata "$dir/monitor" --pgport "$(port monitor)" \
      --hostname 127.0.0.1 --auth trust --no-ssl --pgctl "$bin/pg_ctl" >>"$dir/monitor.log" 2>&1
    # The monitor checks each node every second and calls a node that
    # answered no check for 3 seconds unhealthy, so that a lost primary is
    # replaced within seconds (the defaults: 5 s and 20 s). Before the
    # standby takes writes it waits primary_demote_timeout, long enough for
    # a primary that is only cut off to have demoted itself (its keeper's
    # network_partition_timeout, 2 s below) so that two primaries never
    # take writes at once.
    cat >>"$dir/monitor/postgresql.conf" <<'CONF'
pgautofailover.health_check_period = 1000
pgautofailover.health_check_timeout = 1000
pgautofailover.health_check_max_retries = 1
pgautofailover.health_check_retry_delay = 500
pgautofailover.node_considered_unhealthy_timeout = 3000
pgautofailover.primary_demote_timeout = 5000
CONF
  fi
  service monitor
  for _ in $(seq 1 60); do monitor_sql "SELECT 1" >/dev/null 2>&1 && break || sleep 0.5; done
  if [ ! -d "$dir/node1" ]; then
    say "creating node1 on port $(port node1)"
    create_node node1
  fi
  service node1
  wait_for '^(single|primary|wait_primary)$' 1
  # The standbys are made one after the other: each is a copy of node1.
  for name in node2 node3; do
    if [ ! -d "$dir/$name" ]; then
      say "creating $name on port $(port $name), a copy of node1"
      create_node $name
    fi
    service $name
  done
  wait_for '^(primary|secondary)$' 3
  say "formation up: $(monitor_sql "SELECT string_agg(nodename || ' ' || reportedstate, ', ' ORDER BY nodeid) FROM pgautofailover.node")"
  echo "DATABASE_URL=$(database_url)"
}

node_arg() {
  case "${1:-}" in node1 | node2 | node3) echo "$1" ;; *) fail "name a node: node1, node2 or node3" ;; esac
}

# lose kills a node as the loss of its machine would: its keeper (the
# session its service leads, children and all) and its postmaster at once,
# with no chance to hand over (SIGKILL).
lose() {
  local name keeper postmaster
  name=$(node_arg "${1:-}")
  keeper=$(pgrep -f "^pg_autoctl run --pgdata $dir/$name\$" || true)
  postmaster=$(head -1 "$dir/$name/postmaster.pid" 2>/dev/null || true)
  [ -n "$keeper$postmaster" ] || fail "$name is not running"
  # The keeper leads a session of its own (setsid), so its session is its
  # processes and nothing else.
  [ -z "$keeper" ] || pkill -KILL -s "$keeper" || true
  [ -z "$postmaster" ] || kill -KILL "$postmaster" 2>/dev/null || true
  rm -f "$dir/$name.pid"
  say "$name lost (pg_autoctl and postgres killed)"
}

case $cmd in
up) up "$@" ;;
url) database_url ;;
state) as_owner pg_autoctl show state --pgdata "$dir/monitor" ;;
lose) lose "$@" ;;
back)
  service "$(node_arg "${1:-}")"
  say "$1 started again; it rejoins as a standby"
  ;;
switchover) as_owner pg_autoctl perform switchover --pgdata "$dir/monitor" ;;
down)
  for name in node3 node2 node1 monitor; do
    if [ -f "$dir/$name.pid" ]; then
      as_owner pg_autoctl stop --pgdata "$dir/$name" 2>/dev/null || kill "$(cat "$dir/$name.pid")" 2>/dev/null || true
      rm -f "$dir/$name.pid"
    fi
  done
  ;;
*) fail "unknown command $cmd" ;;
esac
