#!/usr/bin/env bash
# A real Apache HBase 2.6 standalone server on this machine, built from the
# Apache artifacts on Maven Central (interop/hbase-peer): HMaster, one region
# server (or several, HBASE_PEER_REGIONSERVERS) and an in-process ZooKeeper in
# one JVM, on the local filesystem.
#
#   scripts/hbase-peer.sh start  [DIR]   start it (waits until it serves clients)
#   scripts/hbase-peer.sh stop   [DIR]   shut it down cleanly (SIGTERM, then SIGKILL after 90 s)
#   scripts/hbase-peer.sh status [DIR]   running or not, its ports and memory
#
# DIR (default $HBASE_PEER_DIR, else /tmp/ferrobase-hbase-peer) holds the data
# (DIR/data), the log (DIR/peer.log), the pid and the READY line.
#
# Environment:
#   HBASE_PEER_HEAP         Java heap, -Xms and -Xmx (default 2g)
#   HBASE_PEER_MASTER_PORT  master RPC port (default 16000)
#   HBASE_PEER_RS_PORT      region server RPC port (default 16020)
#   HBASE_PEER_ZK_PORT      ZooKeeper client port (default 2181)
#   HBASE_PEER_SET          more HBase settings, "name=value name=value"
#   HBASE_PEER_REGIONSERVERS  region servers in the JVM (default 1); the first on
#                           HBASE_PEER_RS_PORT, the others on ports the system picks
#
# Clients reach it through the RPC connection registry:
#   hbase.client.registry.impl=org.apache.hadoop.hbase.client.RpcConnectionRegistry
#   hbase.client.bootstrap.servers=127.0.0.1:$HBASE_PEER_RS_PORT
# e.g. HBASE_TARGET=peer HBASE_BOOTSTRAP=127.0.0.1:16020 scripts/hbase-client-tests.sh
set -euo pipefail
trap 'echo "hbase-peer.sh: line $LINENO failed: $BASH_COMMAND" >&2' ERR
cd "$(dirname "$0")/.."
root=$(pwd)
project="$root/interop/hbase-peer"

cmd=${1:-}
dir=${2:-${HBASE_PEER_DIR:-/tmp/ferrobase-hbase-peer}}
heap=${HBASE_PEER_HEAP:-2g}
master_port=${HBASE_PEER_MASTER_PORT:-16000}
rs_port=${HBASE_PEER_RS_PORT:-16020}
zk_port=${HBASE_PEER_ZK_PORT:-2181}

pidfile="$dir/peer.pid"
log="$dir/peer.log"
readyfile="$dir/ready"

running_pid() {
  [ -f "$pidfile" ] || return 1
  local pid
  pid=$(cat "$pidfile")
  # Only our own JVM: the pid must still run the peer's main class.
  if [ -r "/proc/$pid/cmdline" ] && grep -qa 'io.ferrobase.peer.HBasePeer' "/proc/$pid/cmdline"; then
    echo "$pid"
    return 0
  fi
  return 1
}

port_busy() {
  # true when something listens on 127.0.0.1:$1 (or any address)
  (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null
}

status() {
  local pid
  if pid=$(running_pid); then
    local rss
    rss=$(awk '/^VmRSS/ {print $2, $3}' "/proc/$pid/status" 2>/dev/null || echo "?")
    echo "running pid=$pid rss=$rss dir=$dir"
    [ -f "$readyfile" ] && cat "$readyfile"
    return 0
  fi
  echo "not running (dir=$dir)"
  return 1
}

start() {
  if running_pid >/dev/null; then
    status
    return 0
  fi
  for p in "$master_port" "$rs_port" "$zk_port"; do
    if port_busy "$p"; then
      echo "port $p is in use; set HBASE_PEER_MASTER_PORT / HBASE_PEER_RS_PORT / HBASE_PEER_ZK_PORT" >&2
      exit 1
    fi
  done
  "$root/scripts/java-deps.sh" peer
  # Compile the launcher and write its classpath (offline: java-deps.sh fetched everything).
  if [ ! -f "$project/target/classpath.txt" ] || [ ! -d "$project/target/classes/io" ] ||
    [ -n "$(find "$project/pom.xml" "$project/src" -newer "$project/target/classpath.txt" -type f 2>/dev/null)" ]; then
    (cd "$project" && mvn -B -q -o -Dstyle.color=never compile dependency:build-classpath -Dmdep.outputFile=target/classpath.txt)
  fi
  mkdir -p "$dir/data"
  rm -f "$readyfile"
  local cp="$project/target/classes:$(cat "$project/target/classpath.txt")"
  # Java 17 flags from HBase's own bin/hbase, plus the heap and G1.
  local jvm=(
    "-Xms$heap" "-Xmx$heap" -XX:+UseG1GC -XX:+IgnoreUnrecognizedVMOptions
    --add-opens=java.base/java.lang=ALL-UNNAMED
    --add-opens=java.base/java.lang.reflect=ALL-UNNAMED
    --add-opens=java.base/java.nio=ALL-UNNAMED
    --add-opens=java.base/sun.nio.ch=ALL-UNNAMED
    --add-opens=java.base/jdk.internal.ref=ALL-UNNAMED
    --add-opens=java.base/java.util.concurrent.atomic=ALL-UNNAMED
    --add-exports=java.base/jdk.internal.misc=ALL-UNNAMED
    --add-exports=java.security.jgss/sun.security.krb5=ALL-UNNAMED
    --add-exports=java.base/sun.net.dns=ALL-UNNAMED
    --add-exports=java.base/sun.net.util=ALL-UNNAMED
    -Dorg.apache.hbase.thirdparty.io.netty.tryReflectionSetAccessible=true
    -Djava.net.preferIPv4Stack=true
  )
  local settings=(
    "hbase.master.port=$master_port"
    "hbase.regionserver.port=$rs_port"
    "hbase.zookeeper.property.clientPort=$zk_port"
  )
  settings+=("ferrobase.peer.regionservers=${HBASE_PEER_REGIONSERVERS:-1}")
  # shellcheck disable=SC2206
  [ -n "${HBASE_PEER_SET:-}" ] && settings+=(${HBASE_PEER_SET})
  echo "== starting Apache HBase (heap $heap) in $dir"
  nohup java "${jvm[@]}" -cp "$cp" io.ferrobase.peer.HBasePeer "$dir/data" "${settings[@]}" \
    >"$log" 2>&1 </dev/null &
  local pid=$!
  echo "$pid" >"$pidfile"
  local waited=0
  while [ $waited -lt 300 ]; do
    if grep -q '^READY ' "$log" 2>/dev/null; then
      grep '^READY ' "$log" | tail -1 >"$readyfile"
      cat "$readyfile"
      return 0
    fi
    if ! kill -0 "$pid" 2>/dev/null; then
      echo "HBase exited before it was ready; the end of $log:" >&2
      tail -40 "$log" >&2
      rm -f "$pidfile"
      exit 1
    fi
    sleep 1
    waited=$((waited + 1))
  done
  echo "HBase was not ready after 300 s; see $log (still running as pid $pid)" >&2
  exit 1
}

stop() {
  local pid
  if ! pid=$(running_pid); then
    echo "not running (dir=$dir)"
    rm -f "$pidfile" "$readyfile"
    return 0
  fi
  kill -TERM "$pid"
  local waited=0
  while kill -0 "$pid" 2>/dev/null && [ $waited -lt 90 ]; do
    sleep 1
    waited=$((waited + 1))
  done
  if kill -0 "$pid" 2>/dev/null; then
    echo "still running after 90 s: SIGKILL" >&2
    kill -KILL "$pid" 2>/dev/null || true
  fi
  rm -f "$pidfile" "$readyfile"
  echo "stopped (dir=$dir, ${waited}s)"
}

case "$cmd" in
  start) start ;;
  stop) stop ;;
  status) status ;;
  *)
    echo "usage: $0 start|stop|status [DIR]" >&2
    exit 2
    ;;
esac
