#!/usr/bin/env bash
# Installs what `make run` and `make test` need and the machine lacks, and
# says what it installs and why. Each argument names one need:
#   postgresql  PostgreSQL's client and server binaries (psql, pg_isready,
#               initdb, pg_ctl), from Debian's package postgresql
#   chromium    Debian's Chromium at /usr/bin/chromium, for the browser tests
#   autofailover pg_auto_failover: pg_autoctl and the server extension,
#               from Debian's package postgresql-<major>-auto-failover
#               matching the installed server, for the high-availability
#               formation and its test
#   promtool    Prometheus's promtool, from Debian's package prometheus, to
#               check the alerting rules edihub ships
# Packages come from apt-get, as root or through sudo, without recommended
# packages (for Chromium they would bring a printer stack and avahi-daemon).
set -euo pipefail
source "$(dirname "$0")/lib.sh"

install() { # why package...
  local why=$1
  shift
  if ! command -v apt-get >/dev/null; then
    echo "$why, and this machine has no apt-get: install $* yourself (see README)" >&2
    exit 1
  fi
  echo "$why: installing $* (apt-get install --no-install-recommends $*)" >&2
  as_root apt-get update -qq
  as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "$@" >/dev/null
  echo "installed $*" >&2
}

for need in "$@"; do
  case "$need" in
  postgresql)
    if ! command -v psql >/dev/null || ! command -v pg_isready >/dev/null || [ -z "$(pg_bindir)" ]; then
      install "PostgreSQL's programs (psql, initdb, pg_ctl) are missing" postgresql
    fi
    ;;
  chromium)
    if [ ! -x /usr/bin/chromium ]; then
      install "the browser tests need Chromium at /usr/bin/chromium" chromium
    fi
    ;;
  autofailover)
    major=$(basename "$(dirname "$(pg_bindir)")")
    if ! command -v pg_autoctl >/dev/null || ! dpkg -s "postgresql-$major-auto-failover" >/dev/null 2>&1; then
      install "the high-availability formation needs pg_autoctl" "postgresql-$major-auto-failover"
    fi
    ;;
  promtool)
    if ! command -v promtool >/dev/null; then
      install "the alerting rules are checked with promtool" prometheus
    fi
    ;;
  *)
    echo "prerequisites.sh: unknown need $need (want postgresql, chromium, autofailover or promtool)" >&2
    exit 2
    ;;
  esac
done
