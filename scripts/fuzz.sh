#!/usr/bin/env bash
# Runs every fuzz target in the module for a bounded time each.
set -euo pipefail
fuzztime="${1:-10s}"
for pkg in $(go list ./...); do
  for target in $(go test -list '^Fuzz' "$pkg" | grep '^Fuzz' || true); do
    echo "fuzz $pkg $target ($fuzztime)"
    go test -run '^$' -fuzz "^${target}\$" -fuzztime "$fuzztime" "$pkg"
  done
done
