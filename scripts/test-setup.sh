#!/usr/bin/env bash
# Prepares what `make test` needs, so that it passes on a new machine: a
# PostgreSQL server (installed with scripts/prerequisites.sh if missing,
# started if it is down) with the database the tests clone their own
# databases from, Debian's Chromium for the browser tests, pg_auto_failover
# for the high-availability test (the standby tests make theirs with the
# server package's pg_basebackup) and promtool for the alerting rules. `.ci/run`
# uses it too.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/lib.sh

url="${TEST_DATABASE_URL:-postgres://postgres@127.0.0.1:5432/test?sslmode=disable}"

echo "make test: checking what the tests need; missing Debian packages (PostgreSQL, Chromium, pg_auto_failover, promtool) are installed with apt-get, and the machine's PostgreSQL is started if it is down" >&2

# The admin pages' browser tests drive Debian's Chromium headless; they fail,
# never skip, without it.
scripts/prerequisites.sh postgresql chromium autofailover promtool
if [ -z "${TEST_DATABASE_URL:-}" ] && ! pg_isready -q -h 127.0.0.1 -p 5432 && command -v pg_ctlcluster >/dev/null; then
  # The tests use the machine's own cluster; start it if it is down.
  echo "make test: starting the machine's PostgreSQL cluster" >&2
  as_root pg_ctlcluster --skip-systemctl-redirect "$(ls /etc/postgresql | sort -V | tail -n 1)" main start
fi
for _ in $(seq 1 30); do pg_isready -q -d "$url" && break; sleep 1; done
if ! pg_isready -q -d "$url"; then
  echo "PostgreSQL at $url does not answer; start it or set TEST_DATABASE_URL (see README)" >&2
  exit 1
fi
# The default server's "test" database holds the migrated templates.
if [ -z "${TEST_DATABASE_URL:-}" ] &&
  [ "$(psql -h 127.0.0.1 -U postgres -d postgres -tAc "SELECT 1 FROM pg_database WHERE datname = 'test'")" != 1 ]; then
  psql -h 127.0.0.1 -U postgres -d postgres -qc "CREATE DATABASE test"
fi
