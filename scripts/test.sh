#!/usr/bin/env bash
# `make test`: every test with the race detector, printing a line per
# package as it finishes and, at the end, the failed tests' output and the
# count of passed, failed and skipped tests. gotestsum (pinned in
# tools/go.mod) reads `go test -json`; it exits non-zero on any failure,
# and so does this script. The events are kept in bin/test.json, so that
# `go tool -modfile=tools/go.mod gotestsum tool slowest --jsonfile
# bin/test.json` lists the slowest tests afterwards. A package may take more
# than go test's default ten minutes on a loaded two-core machine (the
# server's browser tests share two tabs), hence -timeout.
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$PATH:/usr/local/go/bin"
mkdir -p bin

# PKG names the packages to test (default every one: ./...), and SKIP a
# pattern of tests to leave out (go test -skip; SKIP=TestBrowser leaves out
# the browser tests). Tests left out this way are not counted as skipped.
packages="${PKG:-./...}"
skip=()
if [ -n "${SKIP:-}" ]; then
  skip=(-skip "$SKIP")
  echo "make test: leaving out the tests matching $SKIP" >&2
fi

echo "make test: building the tests of $packages with the race detector (a new machine compiles every dependency first, several minutes on 2 cores)" >&2
# shellcheck disable=SC2086 # PKG may name several packages
go tool -modfile=tools/go.mod gotestsum \
  --format pkgname --jsonfile bin/test.json \
  --post-run-command 'bash -c "p=$((TESTS_TOTAL - TESTS_FAILED - TESTS_SKIPPED)); echo $((p < 0 ? 0 : p)) passed, $TESTS_FAILED failed, $TESTS_SKIPPED skipped"' \
  -- -race -count=1 -timeout 30m "${skip[@]}" "$@" $packages
