#!/usr/bin/env bash
# `make vendor`: installs the front-end packages pinned in package.json and
# package-lock.json from the npm registry and copies the minified files the
# pages load into web/static/vendor/. The copies are committed and embedded in
# the binary, so building or running edihub never needs npm or a CDN; run this
# only to upgrade them (change the versions in package.json first).
set -euo pipefail
cd "$(dirname "$0")/.."

npm ci --ignore-scripts --no-audit --no-fund

out=web/static/vendor
rm -rf "$out"
mkdir -p "$out"
cp node_modules/@picocss/pico/css/pico.min.css "$out/pico.min.css"
cp node_modules/@picocss/pico/LICENSE.md "$out/pico.LICENSE.md"
cp node_modules/htmx.org/dist/htmx.min.js "$out/htmx.min.js"
cp node_modules/htmx.org/LICENSE "$out/htmx.LICENSE"
# Redoc renders /api/docs: one standalone bundle (React and its parts
# included) and the licences of what it bundles.
cp node_modules/redoc/bundles/redoc.standalone.js "$out/redoc.standalone.js"
cp node_modules/redoc/LICENSE "$out/redoc.LICENSE"
cp node_modules/redoc/bundles/redoc.standalone.js.LICENSE.txt "$out/redoc.standalone.js.LICENSE.txt"
{
  echo "Vendored by scripts/vendor.sh from the npm registry; do not edit."
  node -e 'const l = require("./package-lock.json"); for (const p of ["@picocss/pico", "htmx.org", "redoc"]) console.log(`${p} ${l.packages["node_modules/" + p].version}`)'
} >"$out/VERSIONS"
echo "vendored into $out:"
cat "$out/VERSIONS"
