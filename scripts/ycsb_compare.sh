#!/usr/bin/env bash
# Runs YCSB core workloads through the server for one or more ferrobase
# binaries, one after the other in the same run, and prints ops/s, p99 and
# the server's CPU time per operation (from /proc/PID/stat) for each, with
# each binary's ops/s as a ratio of the first one's.
#
#   scripts/ycsb_compare.sh [-r RECORDS] [-o OPS] [-w "load c a"] BIN [BIN...]
#
# Each binary gets a fresh standalone server and data directory; the YCSB
# client is always the first binary's `bench ycsb`, so only the server
# differs. Loads use 8 client threads, runs 16, as in README's table. A
# binary may be named more than once (runs alternate; each run is its own
# row), which is how to see this machine's run-to-run noise.
set -euo pipefail

records=100000
ops=100000
workloads="load c"
while getopts "r:o:w:" opt; do
  case $opt in
    r) records=$OPTARG ;;
    o) ops=$OPTARG ;;
    w) workloads=$OPTARG ;;
    *) echo "usage: $0 [-r RECORDS] [-o OPS] [-w 'load c a b e f'] BIN [BIN...]" >&2; exit 2 ;;
  esac
done
shift $((OPTIND - 1))
[ $# -ge 1 ] || { echo "name at least one ferrobase binary" >&2; exit 2; }
client=$1
port=16190
tick=$(getconf CLK_TCK)
work=$(mktemp -d)
trap 'kill "${pid:-}" 2>/dev/null || true; rm -rf "$work"' EXIT

cpu_ticks() { awk '{print $14 + $15}' "/proc/$1/stat"; }

declare -A result
run=0
for bin in "$@"; do
  run=$((run + 1))
  rm -rf "$work/data"
  "$bin" standalone --data-dir "$work/data" --port $port >"$work/server.log" 2>&1 &
  pid=$!
  for _ in $(seq 50); do
    grep -q "listening on" "$work/server.log" 2>/dev/null && break
    sleep 0.2
  done
  sleep 0.5
  for w in $workloads; do
    if [ "$w" = load ]; then
      args=(load --workload a -p recordcount=$records --threads 8)
    else
      args=(run --workload "$w" -p recordcount=$records -p operationcount=$ops --threads 16)
    fi
    before=$(cpu_ticks $pid)
    "$client" bench ycsb "${args[@]}" --server 127.0.0.1:$port --status-interval 1000 --json \
      2>/dev/null >"$work/out.json"
    after=$(cpu_ticks $pid)
    result[$run,$w]=$(python3 - "$work/out.json" $((after - before)) "$tick" <<'EOF'
import json, sys
doc = json.load(open(sys.argv[1]))
ticks, hz = int(sys.argv[2]), int(sys.argv[3])
count = sum(o["latency"]["count"] for o in doc["operations"].values())
p99 = max(o["latency"]["p99_us"] for o in doc["operations"].values())
print(f'{doc["throughput_ops_per_s"]:.0f} {p99} {ticks / hz * 1e6 / max(count, 1):.0f}')
EOF
)
    echo "$(basename "$bin") $w: ops/s p99_us server_cpu_us/op = ${result[$run,$w]}" >&2
  done
  kill $pid
  wait $pid 2>/dev/null || true
done

printf '\n| workload | binary | ops/s | p99 (ms) | server CPU/op (µs) | ops/s vs %s |\n|---|---|---|---|---|---|\n' "$(basename "$client")"
for w in $workloads; do
  read -r base _ _ <<<"${result[1,$w]}"
  run=0
  for bin in "$@"; do
    run=$((run + 1))
    read -r tput p99 cpu <<<"${result[$run,$w]}"
    ratio=$(python3 -c "print(f'{$tput / max($base, 1):.2f}')")
    p99ms=$(python3 -c "print(f'{$p99 / 1000:.1f}')")
    printf '| %s | %s | %s | %s | %s | %s |\n' "$w" "$(basename "$bin")" "$tput" "$p99ms" "$cpu" "$ratio"
  done
done
