#!/usr/bin/env bash
# YCSB against a real Apache HBase and against ferrobase, one after the other
# on this machine, with the same client: YCSB 0.17.0 and the unmodified Apache
# HBase 2.6.4 client (interop/ycsb). For each system in turn it starts a fresh
# server, creates YCSB's pre-split table through the HBase client, loads,
# runs each workload, measures the server process, and stops it. Then it
# prints one table per workload with both systems and ferrobase/HBase per
# figure, and writes OUT/results.json (and OUT/results.md).
#
#   scripts/bench-peer.sh [--records N] [--ops N] [--threads T]
#                         [--workloads a,b,c,d,e,f] [--systems hbase,ferrobase]
#                         [--out DIR] [--memory SIZE] [--splits N]
#                         [--timeout SECONDS] [--keep-data]
#
#   --records N      rows loaded (YCSB recordcount; default 100000)
#   --ops N          operations per workload (operationcount; default 100000)
#   --threads T      YCSB client threads, load and workloads (default 16)
#   --workloads L    YCSB core workloads run after the load, in this order
#                    (default a,b,c,d,e,f; D and E insert new rows)
#   --systems L      hbase and/or ferrobase, run in this order (default both)
#   --out DIR        results, logs and (while running) data (default bench-out/peer)
#   --memory SIZE    each server's memory budget (default 2g): Apache HBase's
#                    Java heap (-Xms/-Xmx) and ferrobase's ferrobase.memory.size;
#                    both size their memstores and block cache as fractions of it
#   --splits N       split keys of usertable (default 10, YCSB's "10 per region
#                    server": N + 1 regions)
#   --timeout S      wall-clock limit of one phase (default 1800); a phase past
#                    it is stopped and recorded as failed
#   --keep-data      keep the data directories (default: removed after measuring)
#
# Environment: FERROBASE_BIN (default target/release/ferrobase, or under
# CARGO_TARGET_DIR); FERROBASE_PORT (default 16220); HBase's ports as in
# scripts/hbase-peer.sh (HBASE_PEER_*_PORT); YCSB_JAVA_OPTS (client JVM,
# default -Xmx1g -XX:+UseG1GC).
#
# A phase that fails on one system (its server does not start, the table
# cannot be created, YCSB's operations fail) is recorded with the first line
# of its error, in the table and the JSON, and the run goes on.
# How it measures and why: docs/bench.md, "YCSB against Apache HBase".
set -euo pipefail
trap 'echo "bench-peer.sh: line $LINENO failed: $BASH_COMMAND" >&2' ERR
cd "$(dirname "$0")/.."
root=$(pwd)

records=100000
ops=100000
threads=16
workloads=a,b,c,d,e,f
systems=hbase,ferrobase
out=bench-out/peer
memory=2g
splits=10
phase_timeout=1800
keep_data=0

usage() {
  sed -n '10,13p' "$0" | sed 's/^# \{0,1\}//' >&2
  exit 2
}
need() { [ $# -ge 2 ] && [ -n "$2" ] || { echo "$1 needs a value" >&2; usage; }; }
while [ $# -gt 0 ]; do
  case "$1" in
    --records) need "$@"; records=$2; shift 2 ;;
    --ops) need "$@"; ops=$2; shift 2 ;;
    --threads) need "$@"; threads=$2; shift 2 ;;
    --workloads) need "$@"; workloads=$2; shift 2 ;;
    --systems) need "$@"; systems=$2; shift 2 ;;
    --out) need "$@"; out=$2; shift 2 ;;
    --memory) need "$@"; memory=$2; shift 2 ;;
    --splits) need "$@"; splits=$2; shift 2 ;;
    --timeout) need "$@"; phase_timeout=$2; shift 2 ;;
    --keep-data) keep_data=1; shift ;;
    -h | --help) usage ;;
    *) echo "unknown argument: $1" >&2; usage ;;
  esac
done
for n in records ops threads splits phase_timeout; do
  [[ ${!n} =~ ^[0-9]+$ ]] || { echo "--${n//_/-} must be a whole number, not '${!n}'" >&2; exit 2; }
done
[[ $memory =~ ^[0-9]+[gGmM]$ ]] || { echo "--memory must look like 2g or 1536m, not '$memory'" >&2; exit 2; }
IFS=, read -r -a workload_list <<<"$workloads"
for w in "${workload_list[@]}"; do
  [[ $w =~ ^[a-f]$ ]] || { echo "unknown workload '$w' (YCSB's core workloads are a to f)" >&2; exit 2; }
done
IFS=, read -r -a system_list <<<"$systems"
want_hbase=0
for s in "${system_list[@]}"; do
  case "$s" in
    hbase) want_hbase=1 ;;
    ferrobase) ;;
    *) echo "unknown system '$s' (hbase, ferrobase)" >&2; exit 2 ;;
  esac
done
case "$memory" in
  *[gG]) memory_bytes=$(( ${memory%?} * 1024 * 1024 * 1024 )) ;;
  *[mM]) memory_bytes=$(( ${memory%?} * 1024 * 1024 )) ;;
esac

ferrobase_bin=${FERROBASE_BIN:-${CARGO_TARGET_DIR:-$root/target}/release/ferrobase}
ferrobase_port=${FERROBASE_PORT:-16220}
hbase_rs_port=${HBASE_PEER_RS_PORT:-16020}
if [[ ,$systems, == *,ferrobase,* ]] && [ ! -x "$ferrobase_bin" ]; then
  echo "no ferrobase binary at $ferrobase_bin: build it (cargo build --release -p ferrobase) or set FERROBASE_BIN" >&2
  exit 1
fi

# --- the client ----------------------------------------------------------------
deps=(ycsb)
[ "$want_hbase" -eq 1 ] && deps+=(peer)
scripts/java-deps.sh "${deps[@]}"
project="$root/interop/ycsb"
if [ ! -f "$project/target/classpath.txt" ] || [ ! -d "$project/target/classes/io" ] ||
  [ -n "$(find "$project/pom.xml" "$project/src" -newer "$project/target/classpath.txt" -type f 2>/dev/null)" ]; then
  # Maven's output only on failure (Debian's Maven 3.8 prints stray color codes even with -q).
  compile_log=$(mktemp)
  if ! (cd "$project" && mvn -B -q -o -Dstyle.color=never compile dependency:build-classpath \
    -Dmdep.outputFile=target/classpath.txt) >"$compile_log" 2>&1; then
    cat "$compile_log" >&2
    echo "compiling interop/ycsb failed" >&2
    exit 1
  fi
  rm -f "$compile_log"
fi
client_cp="$project/target/classes:$(cat "$project/target/classpath.txt")"
read -r -a client_jvm <<<"${YCSB_JAVA_OPTS:--Xmx1g -XX:+UseG1GC}"
# HBase's client flags for Java 17 (bin/hbase).
client_jvm+=(
  -XX:+IgnoreUnrecognizedVMOptions
  --add-opens=java.base/java.lang=ALL-UNNAMED
  --add-opens=java.base/java.nio=ALL-UNNAMED
  --add-opens=java.base/sun.nio.ch=ALL-UNNAMED
  --add-opens=java.base/jdk.internal.ref=ALL-UNNAMED
  --add-exports=java.base/jdk.internal.misc=ALL-UNNAMED
  -Dorg.apache.hbase.thirdparty.io.netty.tryReflectionSetAccessible=true
  -Djava.net.preferIPv4Stack=true
)

mkdir -p "$out"
out=$(cd "$out" && pwd)
: >"$out/phases.jsonl"
: >"$out/systems.jsonl"
hz=$(getconf CLK_TCK)
python3 - "$out/run.json" <<EOF
import json, sys, platform, os
json.dump({
  "date": "$(date -u +%Y-%m-%dT%H:%M:%SZ)",
  "ycsb": "0.17.0", "binding": "io.ferrobase.ycsb.HBaseClient2 on hbase-shaded-client 2.6.4",
  "hbase": "2.6.4-hadoop3 standalone (scripts/hbase-peer.sh)",
  "ferrobase_bin": "$ferrobase_bin",
  "records": $records, "ops": $ops, "threads": $threads,
  "workloads": "$workloads".split(","), "systems": "$systems".split(","),
  "memory": "$memory", "memory_bytes": $memory_bytes, "splits": $splits,
  "phase_timeout_s": $phase_timeout,
  "client_jvm": "${YCSB_JAVA_OPTS:--Xmx1g -XX:+UseG1GC}",
  "machine": {"cpus": os.cpu_count(), "kernel": platform.release(),
              "mem_gib": round(os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**30, 1)},
}, open(sys.argv[1], "w"), indent=2)
EOF

say() { echo "[bench-peer $(date +%H:%M:%S)] $*" >&2; }

# --- the server under test ------------------------------------------------------
server_pid=""
server_system=""
server_dir=""

cpu_ticks() {
  # utime + stime of the process (fields 14 and 15; the name may hold spaces)
  [ -r "/proc/$1/stat" ] || { echo ""; return; }
  sed 's/^.*) //' "/proc/$1/stat" | awk '{print $12 + $13}'
}
peak_rss_kib() {
  awk '/^VmHWM:/ {print $2}' "/proc/$1/status" 2>/dev/null || true
}
port_busy() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

start_server() { # SYSTEM DIR -> sets server_pid, bootstrap; returns 1 with start_error set
  local system=$1 dir=$2
  start_error=""
  case "$system" in
    hbase)
      if ! HBASE_PEER_HEAP=$memory scripts/hbase-peer.sh start "$dir" >"$dir/start.log" 2>&1; then
        start_error=$(grep -m1 -E 'Exception|Error|in use|not ready|exited' "$dir/start.log" || tail -1 "$dir/start.log")
        return 1
      fi
      server_pid=$(cat "$dir/peer.pid")
      bootstrap=127.0.0.1:$hbase_rs_port
      data_dir=$dir/data
      ;;
    ferrobase)
      if port_busy "$ferrobase_port"; then
        start_error="port $ferrobase_port is in use (set FERROBASE_PORT)"
        return 1
      fi
      mkdir -p "$dir"
      "$ferrobase_bin" standalone --data-dir "$dir/data" --port "$ferrobase_port" \
        --set "ferrobase.memory.size=$memory_bytes" >"$dir/server.log" 2>&1 </dev/null &
      server_pid=$!
      local waited=0
      until grep -q 'listening on' "$dir/server.log" 2>/dev/null; do
        if ! kill -0 "$server_pid" 2>/dev/null; then
          start_error="ferrobase exited at start: $(grep -m1 -i error "$dir/server.log" || tail -1 "$dir/server.log")"
          server_pid=""
          return 1
        fi
        if [ $waited -ge 600 ]; then
          start_error="ferrobase did not listen within 60 s (see $dir/server.log)"
          return 1
        fi
        sleep 0.1
        waited=$((waited + 1))
      done
      bootstrap=127.0.0.1:$ferrobase_port
      data_dir=$dir/data
      ;;
  esac
  server_system=$system
  server_dir=$dir
}

stop_server() {
  [ -n "$server_system" ] || return 0
  case "$server_system" in
    hbase) scripts/hbase-peer.sh stop "$server_dir" >>"$server_dir/start.log" 2>&1 || true ;;
    ferrobase)
      if [ -n "$server_pid" ] && kill -0 "$server_pid" 2>/dev/null; then
        kill -TERM "$server_pid" 2>/dev/null || true
        local waited=0
        while kill -0 "$server_pid" 2>/dev/null && [ $waited -lt 600 ]; do
          sleep 0.1
          waited=$((waited + 1))
        done
        if kill -0 "$server_pid" 2>/dev/null; then
          say "ferrobase still running after 60 s: SIGKILL"
          kill -KILL "$server_pid" 2>/dev/null || true
        fi
        wait "$server_pid" 2>/dev/null || true
      fi
      ;;
  esac
  server_pid=""
  server_system=""
}
phase_pid=""
trap 'stop_server' EXIT
trap 'say "interrupted"; [ -z "$phase_pid" ] || kill -TERM "$phase_pid" 2>/dev/null || true; exit 130' INT TERM

# run_phase SYSTEM PHASE COMMAND...: runs it under the timeout, measures the
# server around it, appends a JSON line to phases.jsonl, prints one line.
run_phase() {
  local system=$1 phase=$2; shift 2
  local dir=$out/$system
  local before after hwm code=0 t0 t1 ticks=""
  before=$(cpu_ticks "$server_pid")
  t0=$(date +%s.%N)
  # In the background and waited for, so that Ctrl-C stops it at once (the
  # INT trap kills it; timeout passes the signal on to the JVM).
  timeout --kill-after=30 "$phase_timeout" "$@" >"$dir/$phase.out" 2>"$dir/$phase.err" </dev/null &
  phase_pid=$!
  wait "$phase_pid" || code=$?
  phase_pid=""
  t1=$(date +%s.%N)
  after=$(cpu_ticks "$server_pid")
  hwm=$(peak_rss_kib "$server_pid")
  [ -n "$before" ] && [ -n "$after" ] && ticks=$((after - before))
  local wall
  wall=$(awk -v a="$t0" -v b="$t1" 'BEGIN {print b - a}')
  python3 scripts/bench_peer_report.py phase "$system" "$phase" "$dir/$phase.out" "$dir/$phase.err" \
    "$code" "$ticks" "$hz" "$hwm" "$wall" >>"$out/phases.jsonl"
  python3 - "$out/phases.jsonl" <<'EOF' >&2
import json, sys
r = json.loads(open(sys.argv[1]).read().splitlines()[-1])
what = r["phase"] if r["phase"] in ("create", "load") else "workload " + r["phase"]
import time
msg = f"[bench-peer {time.strftime('%H:%M:%S')}] {r['system']}: {what}: {r['status']}"
if r.get("throughput") is not None and r["status"] != "failed":
    msg += f", {r['throughput']:,.0f} ops/s"
msg += f" ({r['wall_s']:.1f} s"
if r.get("server_cpu_s") is not None:
    msg += f", server CPU {r['server_cpu_s']:.1f} s"
msg += ")"
if r.get("error"):
    msg += f": {r['error']}"
print(msg)
EOF
}

skip_phase() { # SYSTEM PHASE REASON
  python3 -c 'import json, sys
print(json.dumps({"system": sys.argv[1], "phase": sys.argv[2], "status": "skipped", "error": sys.argv[3]}))' \
    "$@" >>"$out/phases.jsonl"
  say "$1: $2: skipped ($3)"
}

record_system() { # SYSTEM START_ERROR DISK CPU HWM
  python3 - "$@" >>"$out/systems.jsonl" <<'EOF'
import json, sys
system, err, disk, cpu, hwm, hz = sys.argv[1:7]
print(json.dumps({
  "system": system,
  "start_error": err or None,
  "disk_bytes": int(disk) if disk else None,
  "server_cpu_s": round(int(cpu) / int(hz), 3) if cpu else None,
  "server_peak_rss_kib": int(hwm) if hwm else None,
}))
EOF
}

# ycsb_cmd MODE(load|run) WORKLOAD: sets cmd to YCSB's command line.
ycsb_cmd() {
  local flag=-t
  [ "$1" = load ] && flag=-load
  cmd=(java "${client_jvm[@]}" -cp "$client_cp" site.ycsb.Client "$flag"
    -db io.ferrobase.ycsb.HBaseClient2
    -P "$project/workloads/workload$2"
    -p columnfamily=family
    -p recordcount="$records" -p operationcount="$ops"
    -p maxexecutiontime="$phase_timeout"
    -threads "$threads"
    "${hbase_props[@]}")
}

for system in "${system_list[@]}"; do
  dir=$out/$system
  rm -rf "$dir"
  mkdir -p "$dir"
  say "$system: starting (memory budget $memory)"
  if ! start_server "$system" "$dir"; then
    say "$system: did not start: $start_error"
    record_system "$system" "$start_error" "" "" "" "$hz"
    for phase in create load "${workload_list[@]}"; do
      skip_phase "$system" "$phase" "the server did not start: $start_error"
    done
    continue
  fi
  start_ticks=$(cpu_ticks "$server_pid")
  say "$system: pid $server_pid, clients bootstrap from $bootstrap"
  # The binding sets every hbase.* property on the client's configuration.
  # An operation gives up after a minute instead of HBase's default 20 (only
  # a failing server comes near either).
  hbase_props=(
    -p hbase.client.registry.impl=org.apache.hadoop.hbase.client.RpcConnectionRegistry
    -p "hbase.client.bootstrap.servers=$bootstrap"
    -p hbase.client.operation.timeout=60000
  )
  run_phase "$system" create java "${client_jvm[@]}" -cp "$client_cp" io.ferrobase.ycsb.CreateUserTable \
    --table usertable --family family --splits "$splits" "${hbase_props[@]}"
  skip=""
  for phase in load "${workload_list[@]}"; do
    if [ -n "$skip" ]; then
      skip_phase "$system" "$phase" "$skip"
      continue
    fi
    if [ "$phase" = load ]; then ycsb_cmd load a; else ycsb_cmd run "$phase"; fi
    run_phase "$system" "$phase" "${cmd[@]}"
    # The client could not even start (connect, find the table): the next
    # phases would fail the same way, after the same retries.
    skip=$(python3 -c 'import json, sys
r = json.loads(open(sys.argv[1]).read().splitlines()[-1])
e = r.get("error") or ""
print(("client start-up failed in " + r["phase"] + ": " + e) if r["status"] == "failed" and "first INIT error" in e else "")' "$out/phases.jsonl")
  done
  end_ticks=$(cpu_ticks "$server_pid")
  cpu=""
  [ -n "$start_ticks" ] && [ -n "$end_ticks" ] && cpu=$((end_ticks - start_ticks))
  hwm=$(peak_rss_kib "$server_pid")
  disk=$(du -sb "$data_dir" 2>/dev/null | cut -f1 || true)
  say "$system: stopping (data directory $(( ${disk:-0} / 1048576 )) MiB)"
  stop_server
  record_system "$system" "" "$disk" "$cpu" "$hwm" "$hz"
  if [ "$keep_data" -eq 0 ]; then
    rm -rf "$data_dir"
  fi
done

python3 scripts/bench_peer_report.py report "$out"
echo
echo "results: $out/results.json, $out/results.md; logs and YCSB output under $out/<system>/"
