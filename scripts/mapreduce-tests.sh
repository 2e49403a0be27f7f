#!/usr/bin/env bash
# Apache HBase's own MapReduce tools against a real ferrobase standalone:
# RowCounter (also --range and a column), CopyTable (newest cells,
# --versions, --starttime/--endtime), Export and Import, ImportTsv, from
# hbase-mapreduce 2.6.4 in Hadoop's LocalJobRunner (interop/mapreduce).
# Their splits come from TableInputFormat, as Spark's newAPIHadoopRDD's do.
# The client finds the server through its ZooKeeper registry endpoint
# (hbase.zookeeper.quorum), as HBase jobs are configured. Passes only when
# every check of io.ferrobase.mapreduce.MapReduceTools passes.
#
#   FERROBASE_BIN=/path/to/ferrobase scripts/mapreduce-tests.sh [ROWS]
#   HBASE_ZOOKEEPER=HOST:PORT scripts/mapreduce-tests.sh [ROWS]
#
# With HBASE_ZOOKEEPER nothing is started: the tools run against the server
# whose ZooKeeper that is (the real Apache HBase of scripts/hbase-peer.sh
# passes every check too).
set -euo pipefail
cd "$(dirname "$0")/.."
if [ -z "${HBASE_ZOOKEEPER:-}" ]; then
  : "${FERROBASE_BIN:?set FERROBASE_BIN to the ferrobase binary to test (or HBASE_ZOOKEEPER)}"
fi
rows=${1:-2000}
case "$rows" in ''|*[!0-9]*|0) echo "mapreduce-tests: ROWS must be a positive number, not '$rows'" >&2; exit 2 ;; esac
scripts/java-deps.sh mapreduce
# Sources newer than the resolved classpath are compiled offline (seconds).
(cd interop/mapreduce && mvn -B -q -o compile)
work=$(mktemp -d /tmp/ferrobase-mapreduce.XXXXXX)
server_pid=""
cleanup() {
  if [ -n "$server_pid" ]; then
    kill -TERM "$server_pid" 2>/dev/null || true
    wait "$server_pid" 2>/dev/null || true
  fi
  rm -rf "$work"
}
trap cleanup EXIT

zk=${HBASE_ZOOKEEPER:-}
if [ -z "$zk" ]; then
  "$FERROBASE_BIN" standalone --data-dir "$work/data" --port 0 --zookeeper-port 0 --info-port -1 \
    >"$work/server.log" 2>&1 </dev/null &
  server_pid=$!
  for _ in $(seq 600); do
    zk=$(sed -n 's/.*ZooKeeper registry (hbase.zookeeper.quorum): \([^ ]*\).*/\1/p' "$work/server.log" | head -1)
    [ -n "$zk" ] && break
    if ! kill -0 "$server_pid" 2>/dev/null; then
      echo "mapreduce-tests: ferrobase exited at start:" >&2
      cat "$work/server.log" >&2
      exit 1
    fi
    sleep 0.1
  done
  if [ -z "$zk" ]; then
    echo "mapreduce-tests: ferrobase did not print its ZooKeeper endpoint within 60 s" >&2
    exit 1
  fi
fi
cp=$(cat interop/mapreduce/target/classpath.txt)
# The jobs' Hadoop and HBase warnings go to a log, shown when a check fails.
if ! java -cp "interop/mapreduce/target/classes:$cp" io.ferrobase.mapreduce.MapReduceTools \
  "$zk" "$rows" "$work/jobs" 2>"$work/jobs.log"; then
  echo "mapreduce-tests: a check failed; the jobs' log:" >&2
  grep -v '^\s*at ' "$work/jobs.log" | tail -40 >&2
  echo "server log:" >&2
  tail -20 "$work/server.log" >&2 2>/dev/null || true
  exit 1
fi
