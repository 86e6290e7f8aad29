#!/usr/bin/env bash
# Stops the project-local PostgreSQL cluster under .data/, if it runs.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/lib.sh
data_dir="$PWD/.data/postgres"
[ -f "$data_dir/PG_VERSION" ] || { echo "no local cluster under .data/"; exit 0; }
as_postgres "$(pg_bindir)/pg_ctl" -D "$data_dir" stop -m fast
