#!/usr/bin/env bash
# Checks that the tests' PostgreSQL answers before `go test` runs, so that a
# missing server is one clear message instead of a failure in every test.
set -euo pipefail
url="${TEST_DATABASE_URL:-postgres://postgres@127.0.0.1:5432/test?sslmode=disable}"
for _ in $(seq 1 30); do
  if pg_isready -q -d "$url"; then exit 0; fi
  sleep 1
done
echo "PostgreSQL at $url does not answer; start it or set TEST_DATABASE_URL (see README)" >&2
exit 1
