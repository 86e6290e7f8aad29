#!/usr/bin/env bash
# `make run`: starts edihub with the demo loaded, saying what it does at
# each step. It first checks that nothing listens on LISTEN_ADDR and
# RECEIVER_ADDR, so that a second `make run` changes nothing of a running
# one. edihub listens on the loopback address (127.0.0.1:8080) unless
# LISTEN_ADDR says otherwise: the banner prints an admin password. The
# database is, in order: DATABASE_URL when set; the local PostgreSQL on
# 127.0.0.1:5432; otherwise a project-local cluster under .data/, made with
# the installed PostgreSQL binaries and started on port 54329. On either,
# the database is this checkout's own, named after it (edihub_<directory>_
# <hash of its path>), created if missing and marked as this checkout's
# (COMMENT ON DATABASE), so that two checkouts' demos never share one.
# Missing PostgreSQL binaries are installed first, as for `make test`
# (scripts/prerequisites.sh). The demo's API key and admin login are kept
# in .data/demo/secrets, so every run prints the same ones while they work;
# a database another checkout's make run made is refused, and the admin
# password of a database no make run marked is never reset.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/lib.sh
export PATH="$PATH:/usr/local/go/bin"

export LISTEN_ADDR="${LISTEN_ADDR:-127.0.0.1:8080}"
addr="$LISTEN_ADDR"
receiver_addr="${RECEIVER_ADDR:-127.0.0.1:8099}"
local_port="${EDIHUB_LOCAL_PG_PORT:-5432}"
data_port=54329
data_dir="$PWD/.data/postgres"
# Each database keeps its demo's secrets apart: this checkout's own in
# .data/demo/secrets, one that DATABASE_URL names in a file of its own.
secrets=.data/demo/secrets
if [ -n "${DATABASE_URL:-}" ]; then
  secrets=".data/demo/secrets-$(printf %s "$DATABASE_URL" | sha256sum | cut -c 1-12)"
fi

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
case "${addr%:*}" in
"" | 0.0.0.0 | "[::]")
  url="http://localhost:$port"
  listen_note="on every network interface (LISTEN_ADDR=$addr)"
  ;;
*)
  url="http://${addr%:*}:$port"
  listen_note="on $addr only (LISTEN_ADDR=:$port make run listens on every interface)"
  ;;
esac

# The checkout's own database: its directory's name, made fit for a
# database name, and a hash of its path, which tells apart two checkouts
# of the same name.
db_name="$(basename "$PWD" | tr 'A-Z' 'a-z' | tr -c 'a-z0-9\n' '_' | cut -c 1-30)"
db_name="edihub_${db_name}_$(printf %s "$PWD" | sha256sum | cut -c 1-6)"
checkout_mark="edihub make run: $PWD"

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
  exists="$(psql -X -h "$1" -p "$2" -U postgres -d postgres -tAc "SELECT 1 FROM pg_database WHERE datname = '$db_name'")"
  if [ "$exists" != 1 ]; then
    say "creating the database $db_name, this checkout's own"
    psql -X -h "$1" -p "$2" -U postgres -d postgres -qc "CREATE DATABASE $db_name" >/dev/null
    psql -X -h "$1" -p "$2" -U postgres -d postgres -q -v mark="$checkout_mark" >/dev/null <<SQL
COMMENT ON DATABASE $db_name IS :'mark';
SQL
  fi
}

# db_owner prints the checkout whose make run made the database
# DATABASE_URL names, or nothing for a database no make run marked (or
# without psql to ask).
db_owner() {
  command -v psql >/dev/null || return 0
  psql -X "$DATABASE_URL" -tAc "SELECT shobj_description(oid, 'pg_database') FROM pg_database
    WHERE datname = current_database()" 2>/dev/null | sed -n 's/^edihub make run: //p'
}

# claim_database marks the database DATABASE_URL names as this checkout's,
# if its role may.
claim_database() {
  psql -X "$DATABASE_URL" -q -v mark="$checkout_mark" >/dev/null 2>&1 <<'SQL' || true
SELECT format('COMMENT ON DATABASE %I IS %L', current_database(), :'mark') \gexec
SQL
}

# plural prints "1 tenant", "2 tenants"; "10001 messages" means more than
# 10000 (edihub demo counts no further).
plural() { # count noun
  case "$1" in
  1) echo "1 $2" ;;
  10001) echo "more than 10000 $2s" ;;
  *) echo "$1 $2s" ;;
  esac
}

if [ -n "${DATABASE_URL:-}" ]; then
  say "database: DATABASE_URL ($(redacted "$DATABASE_URL"))"
else
  scripts/prerequisites.sh postgresql
  if pg_isready -q -h 127.0.0.1 -p "$local_port"; then
    say "database: the local PostgreSQL on 127.0.0.1:$local_port, database $db_name (this checkout's own)"
    db_port=$local_port
  else
    say "database: none answers on 127.0.0.1:$local_port; using a project-local cluster in .data/postgres"
    start_local_cluster
    db_port=$data_port
  fi
  ensure_database 127.0.0.1 "$db_port"
  export DATABASE_URL="postgres://postgres@127.0.0.1:$db_port/$db_name?sslmode=disable"
fi
owner="$(db_owner)"
if [ -n "$owner" ] && [ "$owner" != "$PWD" ]; then
  fail "the database $(redacted "$DATABASE_URL") is the demo database of the checkout $owner (its make run made it, and its demo and login are that checkout's); this run stops, changing nothing of it. Run make run in $owner, or leave DATABASE_URL unset to use this checkout's own database ($db_name)."
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
say "starting edihub on $addr (it applies pending migrations first)"
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
# Only this checkout's database may have its admin's password reset: in
# any other the admin may be another run's.
reset=()
[ "$owner" = "$PWD" ] && reset=(--reset-password)
demo="$(bin/edihub demo --destination "http://$receiver_addr/edi" --secrets "$secrets" "${reset[@]}")"
# The receiver starts once the demo has made its destination, so that it
# checks each delivery's signature with that destination's secret. A
# delivery attempted before it listens is tried again.
say "starting edihub-receiver on $receiver_addr, checking each delivery's signature"
EDIHUB_RECEIVER_SECRET="$(value destination_secret "$demo")" bin/edihub-receiver -addr "$receiver_addr" &
pids+=($!)
case "$(value api_key_status "$demo")" in
kept) key_note="kept from the last run" ;;
*) key_note="new" ;;
esac
admin_hint=""
admin_login="sign in as $(value admin_email "$demo") / $(value admin_password "$demo")"
case "$(value admin_password_status "$demo")" in
kept) admin_login+="; kept from the last run" ;;
replaced) admin_login+="; new: this admin's earlier password no longer works" ;;
unknown)
  admin_login="$(value admin_email "$demo"): another run set its password, unknown here; it stays as it is"
  admin_hint="
                To sign in, print a new one (the other run's then stops working), with this DATABASE_URL:
                bin/edihub user reset-password $(value admin_id "$demo")"
  ;;
*) admin_login+="; new" ;;
esac
if [ -z "$owner" ] && [ "$(value admin_password_status "$demo")" = new ]; then
  claim_database # the demo's login is this checkout's from now on
fi

found_counts=("$(value found_tenants "$demo")" "$(value found_messages "$demo")"
  "$(value found_api_keys "$demo")" "$(value found_destinations "$demo")")
if [ "${found_counts[*]}" = "0 0 0 0" ]; then
  found="nothing: a new database"
else
  found="$(plural "${found_counts[0]}" tenant), $(plural "${found_counts[1]}" message), $(plural "${found_counts[2]}" "live API key") and $(plural "${found_counts[3]}" destination)"
  if [ "$owner" = "$PWD" ]; then
    found+=", left by this checkout's earlier runs"
  fi
  found+="; kept as they are"
fi
others=""
while read -r id other_url; do
  [ -n "$id" ] || continue
  others+="
  Also delivers to: $other_url (destination $id, an earlier run's receiver, which this run does not start:
                its deliveries fail and are retried; pause or delete it at $url/admin/destinations)"
done <<<"$(value other_destination "$demo")"
duplicate_note=""
if [ "${found_counts[1]}" != 0 ]; then
  duplicate_note="
(This database holds messages already: if an earlier run posted the sample, even the first answer is the duplicate.)"
fi

cat <<MSG

edihub is running at $url, listening $listen_note
  Database:     $(redacted "$DATABASE_URL")
  Found there:  $found$others
  API key:      $(value api_key "$demo")  ($key_note)
  Admin:        $url/admin  ($admin_login)$admin_hint
  API docs:     $url/api/docs  (from $url/api/openapi.yaml)
The key and the login are kept in $secrets: the next make run prints the same ones.

Post the sample SAP order as SAP's XML HTTP port does (HTTP Basic, the API key as
the password), twice: the second answer is the duplicate.$duplicate_note
  export EDIHUB_API_KEY=$(value api_key "$demo")
  curl -i -u "sap:\$EDIHUB_API_KEY" -H "Content-Type: application/x-sap.idoc" \\
    --data-binary @docs/samples/orders05.xml $url/api/edi-hub/receive-message
docs/samples/README.md lists more samples (an invoice, a packet, a resend, a changed
copy, X12 and EDIFACT) and the answer each gets.

Post a webhook signed as GitHub signs them (X-Hub-Signature-256: the body's HMAC-SHA256
under the secret) to the demo's integration, which stores it as a SHOP_ORDER message:
  body='{"id":"shop-1001","total":"42.00"}'
  curl -i $url/api/webhook/$(value webhook_integration "$demo") -H "Content-Type: application/json" --data "\$body" \\
    -H "X-Hub-Signature-256: sha256=\$(printf %s "\$body" | openssl dgst -sha256 -hmac $(value webhook_secret "$demo") -r | cut -d ' ' -f 1)"

Each new message is delivered to the demo's destination, edihub-receiver on
http://$receiver_addr/edi, which prints a "delivery" line below for it.
Ctrl-C stops edihub and the receiver.
${RUN_NOTE:+
$RUN_NOTE
}
MSG
wait "$serve"
