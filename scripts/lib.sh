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
