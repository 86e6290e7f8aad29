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
