#!/usr/bin/env bash
# The log9 load two ways against one ferrobase standalone, one after the
# other in one run: `ferrobase bench load --shape log9` (the Rust client over
# gRPC) and the unmodified HBase Java client's BufferedMutator over HBase's
# RPC (interop/java Log9LoadBench: the same rows, thread ranges, write
# buffer and durability). Prints both rates, the server's CPU per row in
# each phase, and their ratios, and writes them as JSON.
#
#   scripts/bench-java-load.sh [--rows N] [--threads T] [--durability skip|async|sync|fsync]
#                              [--out DIR]
#
# Environment: FERROBASE_BIN (default: the release build, built here);
# FERROBASE_PORT (default 16230).
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
rows=200000 threads=4 durability=skip out=""
while [ $# -gt 0 ]; do
  case "$1" in
    --rows) rows=${2:?--rows needs a number}; shift 2 ;;
    --threads) threads=${2:?--threads needs a number}; shift 2 ;;
    --durability) durability=${2:?--durability needs a value}; shift 2 ;;
    --out) out=${2:?--out needs a directory}; shift 2 ;;
    -h|--help) sed -n '2,14p' "$0"; exit 0 ;;
    *) echo "bench-java-load: unknown argument '$1' (see --help)" >&2; exit 2 ;;
  esac
done
case "$rows" in ''|*[!0-9]*|0) echo "bench-java-load: --rows must be a positive number, not '$rows'" >&2; exit 2 ;; esac
case "$threads" in ''|*[!0-9]*|0) echo "bench-java-load: --threads must be a positive number, not '$threads'" >&2; exit 2 ;; esac
case "$durability" in
  skip) java_durability=SKIP_WAL ;;
  async) java_durability=ASYNC_WAL ;;
  sync) java_durability=SYNC_WAL ;;
  fsync) java_durability=FSYNC_WAL ;;
  *) echo "bench-java-load: --durability must be skip, async, sync or fsync, not '$durability'" >&2; exit 2 ;;
esac

if [ -z "${FERROBASE_BIN:-}" ]; then
  echo "== building ferrobase (cargo build --release -p ferrobase)" >&2
  flock /tmp/ferrobase-build.lock cargo build --release -q -p ferrobase
  FERROBASE_BIN="${CARGO_TARGET_DIR:-$root/target}/release/ferrobase"
fi
FERROBASE_BIN=$(realpath "$FERROBASE_BIN")
port=${FERROBASE_PORT:-16230}
work=$(mktemp -d /tmp/ferrobase-java-load.XXXXXX)
[ -n "$out" ] || out=$work/out
mkdir -p "$out"
server_pid=""
cleanup() {
  if [ -n "$server_pid" ]; then
    kill -TERM "$server_pid" 2>/dev/null || true
    wait "$server_pid" 2>/dev/null || true
  fi
  rm -rf "$work/data"
}
trap cleanup EXIT

if (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then
  echo "bench-java-load: port $port is in use (set FERROBASE_PORT)" >&2
  exit 1
fi
scripts/java-deps.sh >&2
"$FERROBASE_BIN" standalone --data-dir "$work/data" --port "$port" >"$out/server.log" 2>&1 </dev/null &
server_pid=$!
for _ in $(seq 600); do
  grep -q 'listening on' "$out/server.log" 2>/dev/null && break
  kill -0 "$server_pid" 2>/dev/null || { echo "bench-java-load: ferrobase exited at start:" >&2; tail -5 "$out/server.log" >&2; exit 1; }
  sleep 0.1
done

# The server's CPU seconds (user + system) so far.
server_cpu() { awk -v hz="$(getconf CLK_TCK)" '{printf "%.2f\n", ($14 + $15) / hz}' "/proc/$server_pid/stat"; }

cpu0=$(server_cpu)
echo "== ferrobase bench load --shape log9 --rows $rows --threads $threads --durability $durability" >&2
"$FERROBASE_BIN" bench load --shape log9 --rows "$rows" --threads "$threads" \
  --durability "$durability" --server "127.0.0.1:$port" --json >"$out/rust.json"

cpu1=$(server_cpu)
echo "== HBase Java client BufferedMutator, the same rows" >&2
(cd interop/java && HBASE_TARGET=peer HBASE_BOOTSTRAP="127.0.0.1:$port" \
  mvn -B -q -ntp -o -Dstyle.color=never test -Dtest=Log9LoadBench \
    -Dsurefire.failIfNoSpecifiedTests=false \
    "-Dinterop.jvm=-Xmx2g -XX:+UseParallelGC" \
    -Dlog9.rows="$rows" -Dlog9.threads="$threads" -Dlog9.durability="$java_durability" \
    -Dlog9.out="$out/java.json" >"$out/java.log" 2>&1) || {
  echo "bench-java-load: the Java load failed; its output:" >&2
  tail -40 "$out/java.log" >&2
  exit 1
}

cpu2=$(server_cpu)

python3 - "$out" "$rows" "$threads" "$durability" "$cpu0" "$cpu1" "$cpu2" <<'PY'
import json, sys, os
out, rows, threads, durability = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
cpu0, cpu1, cpu2 = (float(x) for x in sys.argv[5:8])
rust = json.load(open(os.path.join(out, "rust.json")))
java = json.load(open(os.path.join(out, "java.json")))
r, j = rust.get("rows_per_s"), java["rows_per_sec"]
if not isinstance(r, (int, float)):
    sys.exit("bench-java-load: no rows_per_s in ferrobase bench load's JSON")
result = {"shape": "log9", "rows": rows, "threads": threads, "durability": durability,
          "bench_load_rows_per_sec": r, "java_buffered_mutator_rows_per_sec": j,
          "java_over_bench_load": j / r,
          "server_cpu_s_bench_load": cpu1 - cpu0, "server_cpu_s_java": cpu2 - cpu1}
json.dump(result, open(os.path.join(out, "result.json"), "w"), indent=2)
# The Java phase's server CPU includes the read-back check (3 gets).
us = lambda s: s / rows * 1e6
print(f"| log9, {rows} rows, {threads} threads, {durability} | rows/s | server CPU µs a row |")
print("|---|---|---|")
print(f"| ferrobase bench load (Rust client, gRPC) | {r:,.0f} | {us(cpu1 - cpu0):.2f} |")
print(f"| HBase Java client BufferedMutator (HBase RPC) | {j:,.0f} | {us(cpu2 - cpu1):.2f} |")
print(f"| Java / bench load | {j / r:.2f} | {(cpu2 - cpu1) / max(cpu1 - cpu0, 1e-9):.2f} |")
PY
echo "results: $out/result.json" >&2
