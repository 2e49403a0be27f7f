#!/usr/bin/env bash
# The web UI in a real browser: starts a standalone ferrobase (debug
# binary) with its info port, creates a pre-split table and loads rows
# through the shell, then drives headless Chromium (Debian's `chromium`,
# through npm's playwright-core) over the master page, the table page and
# the region server page: the table is listed, its region count is the one
# `status 'detailed'` reports, the pages render with JavaScript off, and
# the live chart gains points. Screenshots go to target/web-ui/.
#
# Installs what it needs when missing: Debian's chromium, and
# playwright-core into ./.node (npm). FERROBASE_BIN names the binary
# (default: builds and uses the debug one).
set -euo pipefail
cd "$(dirname "$0")/.."

if ! command -v chromium >/dev/null; then
  echo "== installing chromium (Debian) for the web UI test"
  SUDO=""
  [ "$(id -u)" -eq 0 ] || SUDO="sudo"
  $SUDO apt-get update
  $SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y chromium
fi
PLAYWRIGHT_VERSION=1.65.2
if [ ! -f .node/node_modules/playwright-core/package.json ]; then
  command -v npm >/dev/null || {
    SUDO=""
    [ "$(id -u)" -eq 0 ] || SUDO="sudo"
    $SUDO apt-get update
    $SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y nodejs npm
  }
  echo "== installing playwright-core $PLAYWRIGHT_VERSION into .node (drives the system chromium; downloads no browser)"
  mkdir -p .node
  npm install --prefix .node --no-audit --no-fund --silent "playwright-core@$PLAYWRIGHT_VERSION"
fi

target="${CARGO_TARGET_DIR:-$(pwd)/target}"
if [ -z "${FERROBASE_BIN:-}" ]; then
  cargo build -q -p ferrobase
  FERROBASE_BIN="$target/debug/ferrobase"
fi
shots="$(pwd)/target/web-ui"
mkdir -p "$shots"

work="$(mktemp -d)"
server_pid=""
cleanup() {
  if [ -n "$server_pid" ]; then
    kill -TERM "$server_pid" 2>/dev/null || true
    wait "$server_pid" 2>/dev/null || true
  fi
  rm -rf "$work"
}
trap cleanup EXIT

"$FERROBASE_BIN" standalone --data-dir "$work/data" --port 0 --info-port 0 \
  >"$work/out" 2>"$work/err" &
server_pid=$!
for _ in $(seq 1 300); do
  grep -q "info port" "$work/out" 2>/dev/null && break
  kill -0 "$server_pid" 2>/dev/null || { cat "$work/err" >&2; echo "web-ui-test: the server exited" >&2; exit 1; }
  sleep 0.1
done
addr=$(sed -n 's/^ferrobase standalone listening on //p' "$work/out")
info=$(sed -n 's|^  info port (web UI, /metrics, /jmx): \(http://[^ ]*\)/$|\1|p' "$work/out")
[ -n "$addr" ] && [ -n "$info" ] || { cat "$work/out" "$work/err" >&2; echo "web-ui-test: no addresses in the banner" >&2; exit 1; }
echo "== standalone on $addr, info port $info"

# A table in three regions, and rows in each.
{
  echo "create 'webui', {NAME => 'f', VERSIONS => 3}, {SPLITS => ['g', 'p']}"
  for i in $(seq 1 60); do
    for p in a h q; do echo "put 'webui', '$p$i', 'f:q', 'value $i'"; done
  done
} >"$work/load.rb"
"$FERROBASE_BIN" shell --server "$addr" "$work/load.rb" >"$work/load.out" 2>&1 || {
  cat "$work/load.out" >&2; exit 1; }
regions=$("$FERROBASE_BIN" shell --server "$addr" -e "status 'detailed'" | grep -c '"webui,' || true)
echo "== status 'detailed' reports $regions regions of webui"
[ "$regions" -ge 1 ] || { echo "web-ui-test: no regions of webui in status" >&2; exit 1; }

NODE_PATH="$(pwd)/.node/node_modules" node scripts/web-ui-test.cjs "$info" webui "$regions" "$shots"
