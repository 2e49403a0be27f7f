#!/usr/bin/env bash
# Wall-clock and server CPU of one major compaction: starts `ferrobase
# standalone` on a temporary directory with minor compactions held off and
# the compaction throughput control off, loads ROWS rows of SHAPE
# (SKIP_WAL, 16 MiB flushes: one store file per flush), flushes, then times
# `major_compact` from the shell (it returns when the compaction is done)
# and reads the server's CPU seconds from /proc around it. Compare two
# builds by running it with each, in turn, a few times: one run on this
# shared VM says little.
# Usage: scripts/major_compact.sh [BIN...]   (default: target/release/ferrobase)
# Env: ROWS (default 600000), SHAPE (default wide53), PORT (default 17020).
set -euo pipefail
ROWS=${ROWS:-600000}
SHAPE=${SHAPE:-wide53}
PORT=${PORT:-17020}
bins=("$@")
[ ${#bins[@]} -gt 0 ] || bins=(target/release/ferrobase)
cpu_of() { awk '{print $14 + $15}' "/proc/$1/stat"; }
now() { date +%s.%N; }
for bin in "${bins[@]}"; do
  [ -x "$bin" ] || { echo "no binary at $bin: cargo build --release -p ferrobase" >&2; exit 2; }
  dir=$(mktemp -d)
  "$bin" standalone --data-dir "$dir/data" --port "$PORT" \
    --set hbase.hstore.compaction.min=1000 --set hbase.hstore.compaction.max=1000 \
    --set hbase.hstore.blockingStoreFiles=100000 \
    --set hbase.hregion.memstore.flush.size=16777216 \
    --set hbase.hstore.compaction.throughput.lower.bound=0 > "$dir/server.log" 2>&1 &
  pid=$!
  trap 'kill $pid 2>/dev/null; rm -rf "$dir"' EXIT
  for _ in $(seq 1 50); do
    "$bin" shell --server "127.0.0.1:$PORT" -e "list" > /dev/null 2>&1 && break
    sleep 0.2
  done
  "$bin" bench load --shape "$SHAPE" --rows "$ROWS" --threads 10 --write-buffer 5m \
    --durability skip --server "127.0.0.1:$PORT" --table compact_bench > "$dir/load.log" 2>&1 \
    || { cat "$dir/load.log" >&2; exit 1; }
  "$bin" shell --server "127.0.0.1:$PORT" -e "flush 'compact_bench'" > /dev/null
  mb=$(du -sm "$dir/data" | cut -f1)
  c1=$(cpu_of "$pid"); t1=$(now)
  "$bin" shell --server "127.0.0.1:$PORT" -e "major_compact 'compact_bench'" > /dev/null
  t2=$(now); c2=$(cpu_of "$pid")
  hz=$(getconf CLK_TCK)
  awk -v b="$bin" -v r="$ROWS" -v s="$SHAPE" -v mb="$mb" -v t1="$t1" -v t2="$t2" \
    -v c1="$c1" -v c2="$c2" -v hz="$hz" \
    'BEGIN { printf "%s  %s rows of %s (%d MB)  major_compact %.2f s  server CPU %.2f s\n", b, r, s, mb, t2 - t1, (c2 - c1) / hz }'
  kill "$pid"; wait "$pid" 2>/dev/null || true
  rm -rf "$dir"; trap - EXIT
done
