#!/usr/bin/env bash
# `make run`: starts edihub on the first database it finds, with the demo
# loaded. In order: DATABASE_URL when set; the local PostgreSQL on
# 127.0.0.1:5432 (database edihub, created if missing); otherwise a
# project-local cluster under .data/, made with the installed PostgreSQL
# binaries and started on port 54329.
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$PATH:/usr/local/go/bin"

local_host=127.0.0.1
local_port="${EDIHUB_LOCAL_PG_PORT:-5432}"
data_port=54329
data_dir="$PWD/.data/postgres"

pg_bin() {
  # Debian keeps the server binaries out of PATH.
  if command -v pg_config >/dev/null && [ -x "$(pg_config --bindir)/initdb" ]; then
    pg_config --bindir
  else
    ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1
  fi
}

# as_owner runs a server binary as the cluster's owner: PostgreSQL refuses
# to run as root.
as_owner() {
  if [ "$(id -u)" = 0 ]; then
    runuser -u postgres -- "$@"
  else
    "$@"
  fi
}

start_local_cluster() {
  local bin
  bin="$(pg_bin)"
  if [ -z "$bin" ] || [ ! -x "$bin/initdb" ]; then
    echo "no PostgreSQL reachable and no PostgreSQL binaries installed (initdb, pg_ctl):" >&2
    echo "install PostgreSQL (apt-get install postgresql) or set DATABASE_URL" >&2
    exit 1
  fi
  mkdir -p "$data_dir"
  [ "$(id -u)" = 0 ] && chown -R postgres "$PWD/.data"
  if [ ! -f "$data_dir/PG_VERSION" ]; then
    echo "creating a PostgreSQL cluster in $data_dir"
    as_owner "$bin/initdb" -D "$data_dir" -U postgres --auth=trust >/dev/null
  fi
  if ! as_owner "$bin/pg_ctl" -D "$data_dir" status >/dev/null 2>&1; then
    as_owner "$bin/pg_ctl" -D "$data_dir" -l "$PWD/.data/postgres.log" -w \
      -o "-p $data_port -c listen_addresses=$local_host -k $PWD/.data" start >/dev/null
    echo "started PostgreSQL on $local_host:$data_port (log: .data/postgres.log; stop: make stop-db)"
  fi
}

ensure_database() { # host port
  local exists
  exists="$(psql -h "$1" -p "$2" -U postgres -d postgres -tAc "SELECT 1 FROM pg_database WHERE datname = 'edihub'")"
  if [ "$exists" != 1 ]; then
    psql -h "$1" -p "$2" -U postgres -d postgres -qc "CREATE DATABASE edihub" >/dev/null
  fi
}

if [ -z "${DATABASE_URL:-}" ]; then
  if pg_isready -q -h "$local_host" -p "$local_port"; then
    host=$local_host port=$local_port
  else
    start_local_cluster
    host=$local_host port=$data_port
  fi
  ensure_database "$host" "$port"
  export DATABASE_URL="postgres://postgres@$host:$port/edihub?sslmode=disable"
fi

go build -o bin/edihub ./cmd/edihub
go build -o bin/edihub-receiver ./cmd/edihub-receiver

# A small receiver on loopback stands for the system messages are delivered
# to; the demo's destination points at it, and loopback must be opened for
# destinations on purpose.
receiver_addr="${RECEIVER_ADDR:-127.0.0.1:8099}"
export DESTINATION_ALLOWED_CIDRS="${DESTINATION_ALLOWED_CIDRS:-127.0.0.1/32}"
bin/edihub-receiver -addr "$receiver_addr" &
receiver_pid=$!
trap 'kill "$receiver_pid" 2>/dev/null' EXIT

bin/edihub migrate
demo="$(bin/edihub demo --destination "http://$receiver_addr/edi")"
api_key="$(sed -n 's/^api_key=//p' <<<"$demo")"
email="$(sed -n 's/^admin_email=//p' <<<"$demo")"
password="$(sed -n 's/^admin_password=//p' <<<"$demo")"
addr="${LISTEN_ADDR:-:8080}"
url="http://localhost:${addr##*:}"

cat <<MSG

edihub is starting at $url  (database: ${DATABASE_URL%%\?*})
  API key:      $api_key
  Admin:        $url/admin  (sign in as $email / $password)

Post the sample SAP order (run it twice: the second answer is the duplicate):
  curl -i -X POST $url/api/edi-hub/receive-message \\
    -H "Authorization: Bearer $api_key" -H "Content-Type: application/json" \\
    --data @docs/samples/receive_message_envelope.json

Each new message is delivered to the demo's destination, edihub-receiver on
http://$receiver_addr/edi, which prints a "delivery" line below for it.

MSG
bin/edihub serve
