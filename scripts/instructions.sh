#!/usr/bin/env bash
# Instructions (valgrind cachegrind's Ir, user space only) that an embedded
# `ferrobase bench load` of each shape executes, client and server together,
# and each shape's ratio to the first one. Unlike rows/s on a shared VM, the
# count repeats within a fraction of a percent: compactions are kept from
# running (they start at timing-dependent moments), so it covers the write
# path and the flushes. Kernel work (write copies, page faults) is not
# counted. Usage: scripts/instructions.sh [SHAPE...]   (default: single53 wide53)
# Env: BIN (default target/release/ferrobase), ROWS (default 50000).
set -euo pipefail
BIN=${BIN:-target/release/ferrobase}
ROWS=${ROWS:-50000}
command -v valgrind >/dev/null || { echo "needs valgrind: apt-get install -y valgrind" >&2; exit 2; }
[ -x "$BIN" ] || { echo "no binary at $BIN: cargo build --release -p ferrobase" >&2; exit 2; }
shapes=("$@")
[ ${#shapes[@]} -gt 0 ] || shapes=(single53 wide53)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
first=""
for shape in "${shapes[@]}"; do
  valgrind --tool=cachegrind --cache-sim=no --cachegrind-out-file="$tmp/cg.$shape" \
    "$BIN" bench load --shape "$shape" --rows "$ROWS" --threads 4 --write-buffer 5m \
    --durability sync \
    --set hbase.hregion.memstore.flush.size=8388608 \
    --set hbase.hstore.compaction.min=1000 \
    --set hbase.hstore.compaction.max=1000 \
    --set hbase.hstore.blockingStoreFiles=100000 \
    > "$tmp/out.$shape" 2> "$tmp/err.$shape" || { cat "$tmp/err.$shape" >&2; exit 1; }
  ir=$(awk '/I[[:space:]]+refs/ {gsub(",", "", $NF); print $NF}' "$tmp/err.$shape")
  [ -n "$first" ] || first=$ir
  awk -v s="$shape" -v n="$ROWS" -v ir="$ir" -v f="$first" \
    'BEGIN { printf "%-10s rows %d  instructions %.3f G  per row %.0f  ratio to first %.2f\n", s, n, ir/1e9, ir/n, ir/f }'
done
