#!/usr/bin/env bash
# Stops the project-local PostgreSQL cluster under .data/, if it runs.
set -euo pipefail
cd "$(dirname "$0")/.."
data_dir="$PWD/.data/postgres"
[ -f "$data_dir/PG_VERSION" ] || { echo "no local cluster under .data/"; exit 0; }
bin="$(ls -d /usr/lib/postgresql/*/bin | sort -V | tail -n 1)"
if [ "$(id -u)" = 0 ]; then
  runuser -u postgres -- "$bin/pg_ctl" -D "$data_dir" stop -m fast
else
  "$bin/pg_ctl" -D "$data_dir" stop -m fast
fi
