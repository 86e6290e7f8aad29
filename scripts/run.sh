#!/usr/bin/env bash
# `make run`: starts edihub with the demo loaded, saying what it does at
# each step. It first checks that nothing listens on LISTEN_ADDR and
# RECEIVER_ADDR, so that a second `make run` changes nothing of a running
# one. The database is, in order: DATABASE_URL when set; the local
# PostgreSQL on 127.0.0.1:5432 (database edihub, created if missing);
# otherwise a project-local cluster under .data/, made with the installed
# PostgreSQL binaries and started on port 54329. Missing PostgreSQL
# binaries are installed first, as for `make test` (scripts/prerequisites.sh).
# The demo's API key and admin login are kept in .data/demo/secrets, so
# every run prints the same ones while they work.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/lib.sh
export PATH="$PATH:/usr/local/go/bin"

addr="${LISTEN_ADDR:-:8080}"
receiver_addr="${RECEIVER_ADDR:-127.0.0.1:8099}"
local_port="${EDIHUB_LOCAL_PG_PORT:-5432}"
data_port=54329
data_dir="$PWD/.data/postgres"
secrets=.data/demo/secrets

say() { echo "make run: $*"; }
fail() {
  echo "make run: $*" >&2
  exit 1
}

# dial_host is where to reach a listen address such as ":8080",
# "0.0.0.0:8080" or "[::1]:8080".
dial_host() {
  local h="${1%:*}"
  h="${h#[}" h="${h%]}"
  case "$h" in "" | 0.0.0.0 | ::) echo 127.0.0.1 ;; *) echo "$h" ;; esac
}

# listening succeeds when something accepts connections on host port;
# http_get prints the answer to GET path there. Both give up after 2
# seconds, and need nothing but bash.
listening() {
  timeout 2 bash -c 'exec 3<>"/dev/tcp/$1/$2"' _ "$1" "$2" 2>/dev/null
}
http_get() { # host port path
  timeout 2 bash -c 'exec 3<>"/dev/tcp/$1/$2" && printf "GET %s HTTP/1.0\r\nHost: %s\r\n\r\n" "$3" "$1" >&3 && cat <&3' \
    _ "$1" "$2" "$3" 2>/dev/null
}

# redacted is a database URL without its password and parameters.
redacted() { sed -E 's#(//[^:/@]*):[^@/]*@#\1:…@#; s#\?.*##' <<<"$1"; }

# value prints the value of a name=value line of demo's output.
value() { sed -n "s/^$1=//p" <<<"$2"; }

host="$(dial_host "$addr")" port="${addr##*:}"
url="http://localhost:$port"

# A running edihub keeps its database and its login: this run stops here.
if listening "$host" "$port"; then
  if http_get "$host" "$port" / | grep -q 'edihub</title>'; then
    echo "make run: edihub is already running at $url; this run changes nothing and stops." >&2
    if [ -r "$secrets" ]; then
      saved="$(cat "$secrets")"
      echo "  Its login, as the last make run printed it (kept in $secrets):" >&2
      echo "  API key:  $(value api_key "$saved")" >&2
      echo "  Admin:    $url/admin  (sign in as $(value admin_email "$saved") / $(value admin_password "$saved"))" >&2
    fi
    fail "stop it first (Ctrl-C where it runs) to start it again, or set LISTEN_ADDR and RECEIVER_ADDR to run another one beside it."
  fi
  fail "another program listens on port $port (LISTEN_ADDR=$addr): stop it, or choose another port, e.g. LISTEN_ADDR=:8081 make run"
fi
if listening "$(dial_host "$receiver_addr")" "${receiver_addr##*:}"; then
  fail "another program listens on $receiver_addr, where the demo's receiver goes (RECEIVER_ADDR): stop it, or choose another address, e.g. RECEIVER_ADDR=127.0.0.1:8098 make run"
fi
command -v go >/dev/null ||
  fail "Go is missing: install Go $(sed -n 's/^go //p' go.mod) or newer (https://go.dev/dl/), then run make run again"

start_local_cluster() {
  local bin
  bin="$(pg_bindir)"
  [ -n "$bin" ] && [ -x "$bin/initdb" ] || fail "no PostgreSQL server binaries (initdb, pg_ctl) found; set DATABASE_URL"
  mkdir -p "$data_dir"
  if [ "$(id -u)" = 0 ]; then
    # The server runs as postgres; it writes its log and socket in .data/.
    chown postgres "$PWD/.data"
    chown -R postgres "$data_dir"
  fi
  if [ ! -f "$data_dir/PG_VERSION" ]; then
    say "creating a PostgreSQL cluster in .data/postgres ($bin/initdb)"
    as_postgres "$bin/initdb" -D "$data_dir" -U postgres --auth=trust >/dev/null
  fi
  if ! as_postgres "$bin/pg_ctl" -D "$data_dir" status >/dev/null 2>&1; then
    as_postgres "$bin/pg_ctl" -D "$data_dir" -l "$PWD/.data/postgres.log" -w \
      -o "-p $data_port -c listen_addresses=127.0.0.1 -k $PWD/.data" start >/dev/null
    say "started PostgreSQL on 127.0.0.1:$data_port (log: .data/postgres.log; make stop-db stops it)"
  fi
}

ensure_database() { # host port
  local exists
  exists="$(psql -h "$1" -p "$2" -U postgres -d postgres -tAc "SELECT 1 FROM pg_database WHERE datname = 'edihub'")"
  if [ "$exists" != 1 ]; then
    say "creating the database edihub"
    psql -h "$1" -p "$2" -U postgres -d postgres -qc "CREATE DATABASE edihub" >/dev/null
  fi
}

if [ -n "${DATABASE_URL:-}" ]; then
  say "database: DATABASE_URL ($(redacted "$DATABASE_URL"))"
else
  scripts/prerequisites.sh postgresql
  if pg_isready -q -h 127.0.0.1 -p "$local_port"; then
    say "database: the local PostgreSQL on 127.0.0.1:$local_port, database edihub"
    db_port=$local_port
  else
    say "database: none answers on 127.0.0.1:$local_port; using a project-local cluster in .data/postgres"
    start_local_cluster
    db_port=$data_port
  fi
  ensure_database 127.0.0.1 "$db_port"
  export DATABASE_URL="postgres://postgres@127.0.0.1:$db_port/edihub?sslmode=disable"
fi

# The background processes stop with this script: the ticker below, the
# receiver and edihub, which is given time to finish in-flight requests.
pids=()
cleanup() {
  [ ${#pids[@]} = 0 ] && return
  kill "${pids[@]}" 2>/dev/null || true
  wait "${pids[@]}" 2>/dev/null || true
}
trap cleanup EXIT

say "building bin/edihub and bin/edihub-receiver (a first build compiles every dependency: minutes on 2 cores; later ones take seconds)"
started=$SECONDS
(n=0; while sleep 1; do ((++n % 15)) || say "still building ($n s)"; done) &
ticker=$!
pids+=("$ticker")
mkdir -p bin
go build -o bin/ ./cmd/edihub ./cmd/edihub-receiver
kill "$ticker"
say "built in $((SECONDS - started)) s"

# A small receiver on loopback stands for the system messages are delivered
# to; the demo's destination points at it, and loopback must be opened for
# destinations on purpose.
export DESTINATION_ALLOWED_CIDRS="${DESTINATION_ALLOWED_CIDRS:-127.0.0.1/32}"
say "starting edihub-receiver on $receiver_addr and edihub on $addr (edihub applies pending migrations first)"
bin/edihub-receiver -addr "$receiver_addr" &
pids+=($!)
bin/edihub serve &
serve=$!
pids+=("$serve")
for ((i = 0; ; i++)); do
  http_get "$host" "$port" /readyz | grep -q '"status":"ready"' && break
  if ! kill -0 "$serve" 2>/dev/null; then
    wait "$serve" || fail "edihub stopped; its last lines above say why"
  fi
  ((i < 300)) || fail "edihub did not become ready on $addr within a minute"
  sleep 0.2
done

if [ -r "$secrets" ]; then
  say "loading the demo (tenant acme), keeping the API key and login saved in $secrets while they work"
else
  say "loading the demo (tenant acme); its API key and login are kept in $secrets for the next runs"
fi
demo="$(bin/edihub demo --destination "http://$receiver_addr/edi" --secrets "$secrets")"
case "$(value api_key_status "$demo")" in
kept) key_note="kept from the last run" ;;
*) key_note="new" ;;
esac
case "$(value admin_password_status "$demo")" in
kept) password_note="kept from the last run" ;;
replaced) password_note="new: this admin's earlier password no longer works" ;;
*) password_note="new" ;;
esac

cat <<MSG

edihub is running at $url  (database: $(redacted "$DATABASE_URL"))
  API key:      $(value api_key "$demo")  ($key_note)
  Admin:        $url/admin  (sign in as $(value admin_email "$demo") / $(value admin_password "$demo"); $password_note)
  OpenAPI:      $url/api/openapi.yaml
The key and the login are kept in $secrets: the next make run prints the same ones.

Post the sample SAP order (run it twice: the second answer is the duplicate):
  curl -i -X POST $url/api/edi-hub/receive-message \\
    -H "Authorization: Bearer $(value api_key "$demo")" -H "Content-Type: application/json" \\
    --data @docs/samples/receive_message_envelope.json

Each new message is delivered to the demo's destination, edihub-receiver on
http://$receiver_addr/edi, which prints a "delivery" line below for it.
Ctrl-C stops edihub and the receiver.
${RUN_NOTE:+
$RUN_NOTE
}
MSG
wait "$serve"
