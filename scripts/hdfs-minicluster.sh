#!/usr/bin/env bash
# A real HDFS on this machine for the hdfs:// storage root: Apache Hadoop's
# MiniDFSCluster (interop/hdfs-minicluster, hadoop-client-minicluster from
# Maven Central), one NameNode and three DataNodes in one JVM, every port a
# free one on 127.0.0.1.
#
#   scripts/hdfs-minicluster.sh start DIR    start it; prints READY hdfs://127.0.0.1:PORT
#   scripts/hdfs-minicluster.sh stop DIR     stop it (SIGTERM, SIGKILL after 20 s)
#   scripts/hdfs-minicluster.sh status DIR   running or not, its URL and memory
#   scripts/hdfs-minicluster.sh classpath    the JVM classpath (built when missing),
#                                            for harnesses that start the main class
#
# DIR holds the blocks and NameNode metadata (DIR/data), the log
# (DIR/minicluster.log), the pid and the URL (DIR/url). A fresh machine gets
# a JDK 17, Maven and the artifacts from scripts/java-deps.sh hdfs (once).
#
# Environment:
#   HDFS_MINICLUSTER_HEAP       Java heap (default 768m)
#   HDFS_MINICLUSTER_DATANODES  how many DataNodes (default 3)
#   HDFS_MINICLUSTER_SET        more Hadoop settings, "name=value name=value"
#
#   url=$(scripts/hdfs-minicluster.sh start /tmp/hdfs | sed -n 's/^READY //p')
#   ferrobase standalone --root "$url/ferrobase"
set -euo pipefail
trap 'echo "hdfs-minicluster.sh: line $LINENO failed: $BASH_COMMAND" >&2' ERR
cd "$(dirname "$0")/.."
root=$(pwd)
project="$root/interop/hdfs-minicluster"
main=io.ferrobase.hdfs.MiniHdfs

cmd=${1:-}
dir=${2:-}
heap=${HDFS_MINICLUSTER_HEAP:-768m}
datanodes=${HDFS_MINICLUSTER_DATANODES:-3}

usage() {
  echo "usage: $0 start|stop|status DIR | $0 classpath" >&2
  exit 2
}

# Builds the launcher when missing or older than its sources, and prints
# the classpath. Offline after java-deps.sh fetched everything.
classpath() {
  "$root/scripts/java-deps.sh" hdfs >&2
  if [ ! -f "$project/target/classpath.txt" ] || [ ! -d "$project/target/classes/io" ] ||
    [ -n "$(find "$project/pom.xml" "$project/src" -newer "$project/target/classpath.txt" -type f 2>/dev/null)" ]; then
    (cd "$project" && mvn -B -q -o -Dstyle.color=never compile dependency:build-classpath \
      -Dmdep.outputFile=target/classpath.txt) >&2
  fi
  echo "$project/target/classes:$(cat "$project/target/classpath.txt")"
}

running_pid() {
  [ -f "$dir/minicluster.pid" ] || return 1
  local pid
  pid=$(cat "$dir/minicluster.pid")
  # Only our own JVM: the pid must still run the launcher's main class.
  if [ -r "/proc/$pid/cmdline" ] && grep -qa "$main" "/proc/$pid/cmdline"; then
    echo "$pid"
    return 0
  fi
  return 1
}

start() {
  if running_pid >/dev/null; then
    echo "already running"
    cat "$dir/ready"
    return 0
  fi
  local cp
  cp=$(classpath)
  mkdir -p "$dir"
  rm -f "$dir/url" "$dir/ready"
  local settings=()
  # shellcheck disable=SC2206
  [ -n "${HDFS_MINICLUSTER_SET:-}" ] && settings+=(${HDFS_MINICLUSTER_SET})
  echo "== starting MiniDFSCluster (1 NameNode, $datanodes DataNodes, heap $heap) in $dir" >&2
  nohup java "-Xms128m" "-Xmx$heap" -XX:+UseSerialGC -XX:TieredStopAtLevel=1 \
    -Djava.net.preferIPv4Stack=true -cp "$cp" "$main" "$dir" \
    --datanodes "$datanodes" "${settings[@]}" >"$dir/minicluster.log" 2>&1 </dev/null &
  local pid=$!
  echo "$pid" >"$dir/minicluster.pid"
  local waited=0
  while [ $waited -lt 1200 ]; do
    if [ -f "$dir/url" ]; then
      echo "READY $(cat "$dir/url")" | tee "$dir/ready"
      return 0
    fi
    if ! kill -0 "$pid" 2>/dev/null; then
      echo "MiniDFSCluster exited before it was ready; the end of $dir/minicluster.log:" >&2
      tail -40 "$dir/minicluster.log" >&2
      rm -f "$dir/minicluster.pid"
      exit 1
    fi
    sleep 0.1
    waited=$((waited + 1))
  done
  echo "MiniDFSCluster was not ready after 120 s; see $dir/minicluster.log (still running as pid $pid)" >&2
  exit 1
}

stop() {
  local pid
  if ! pid=$(running_pid); then
    echo "not running (dir=$dir)"
    rm -f "$dir/minicluster.pid" "$dir/ready"
    return 0
  fi
  kill -TERM "$pid"
  local waited=0
  while kill -0 "$pid" 2>/dev/null && [ $waited -lt 200 ]; do
    sleep 0.1
    waited=$((waited + 1))
  done
  if kill -0 "$pid" 2>/dev/null; then
    echo "still running after 20 s: SIGKILL" >&2
    kill -KILL "$pid" 2>/dev/null || true
  fi
  rm -f "$dir/minicluster.pid" "$dir/ready" "$dir/url"
  echo "stopped (dir=$dir)"
}

status() {
  local pid
  if pid=$(running_pid); then
    local rss
    rss=$(awk '/^VmRSS/ {print $2, $3}' "/proc/$pid/status" 2>/dev/null || echo "?")
    echo "running pid=$pid rss=$rss dir=$dir $(cat "$dir/url" 2>/dev/null)"
    return 0
  fi
  echo "not running (dir=$dir)"
  return 1
}

case "$cmd" in
  start) [ -n "$dir" ] || usage; start ;;
  stop) [ -n "$dir" ] || usage; stop ;;
  status) [ -n "$dir" ] || usage; status || exit 1 ;;
  classpath) classpath ;;
  *) usage ;;
esac
