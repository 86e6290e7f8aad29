#!/usr/bin/env bash
# `make run-ha`: `make run` on a high-availability formation under
# .data/ha (scripts/ha.sh): a pg_auto_failover monitor and three PostgreSQL
# nodes with synchronous replication, edihub's DATABASE_URL listing them.
# The formation keeps running after edihub stops; `scripts/ha.sh down
# .data/ha` stops it.
set -euo pipefail
cd "$(dirname "$0")/.."

dir=.data/ha
# The formation's processes run as postgres, which must reach .data/ha:
# an edihub demo of an earlier version made .data/ private. The demo's
# secrets stay private in .data/demo.
mkdir -p .data && chmod go+x .data
echo "make run-ha: starting the formation under $dir (the first time takes a minute: a monitor, a primary and two copies of it)"
database_url="$(scripts/ha.sh up "$dir" | sed -n 's/^DATABASE_URL=//p')"

export DATABASE_URL="$database_url"
# The read-only admin pages (dashboard, audit log, message search) read
# from the standby when one answers, so that heavy admin queries never load
# the primary (docs/operations.md, "High availability").
export ADMIN_DATABASE_URL="${database_url/target_session_attrs=read-write/target_session_attrs=prefer-standby}"
export RUN_NOTE="High availability: edihub writes to whichever node is primary now.
  See the formation:        scripts/ha.sh state $dir
  Lose the primary's machine (its pg_autoctl and postgres killed at once), then
  watch a standby take over within about 14 seconds while you post messages:
                            scripts/ha.sh lose $dir node1   (or whichever node is primary)
  Lose a standby's machine: intake goes on, the other standby confirms.
  Bring the lost node back as a standby:
                            scripts/ha.sh back $dir node1
  A planned switchover (a few seconds without writes):
                            scripts/ha.sh switchover $dir
  The dashboard, audit log and message search read from the standby
  (ADMIN_DATABASE_URL); they say so when it lags more than 5 seconds.
  Stop the formation after edihub: scripts/ha.sh down $dir"
exec scripts/run.sh
