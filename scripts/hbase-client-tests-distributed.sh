#!/usr/bin/env bash
# The HBase Java client interop tests (interop/java) against a distributed
# ferrobase: a real etcd, one master and two region servers on a shared
# directory root, all on free loopback ports. The client bootstraps from
# the master (it answers the connection registry, MasterService and
# hbase:meta; ZooKeeperRegistryTest reads its ZooKeeper registry endpoint);
# the region servers answer ClientService and AdminService for their regions. Ends with JUnit's summary; exits non-zero if a test failed.
#
#   FERROBASE_BIN=target/debug/ferrobase scripts/hbase-client-tests-distributed.sh [MAVEN ARGS]
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
if [ -z "${FERROBASE_BIN:-}" ]; then
  flock /tmp/ferrobase-build.lock cargo build -q -p ferrobase
  FERROBASE_BIN="${CARGO_TARGET_DIR:-$root/target}/debug/ferrobase"
fi
FERROBASE_BIN=$(realpath "$FERROBASE_BIN")
command -v etcd >/dev/null || { echo "etcd is required (Debian's etcd-server; scripts/test.sh installs it)" >&2; exit 1; }

work=$(mktemp -d /tmp/ferrobase-distributed-java.XXXXXX)
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  for p in "${pids[@]}"; do wait "$p" 2>/dev/null || true; done
  rm -rf "$work"
}
trap cleanup EXIT
free_port() {
  python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}
wait_for() { # FILE TEXT PID
  for _ in $(seq 1 600); do
    grep -q "$2" "$1" 2>/dev/null && return 0
    kill -0 "$3" 2>/dev/null || { cat "$1" >&2; echo "process of $1 exited" >&2; exit 1; }
    sleep 0.1
  done
  cat "$1" >&2
  echo "timed out waiting for '$2' in $1" >&2
  exit 1
}

client=$(free_port) peer=$(free_port)
etcd --name java --data-dir "$work/etcd" \
  --listen-client-urls "http://127.0.0.1:$client" --advertise-client-urls "http://127.0.0.1:$client" \
  --listen-peer-urls "http://127.0.0.1:$peer" --initial-advertise-peer-urls "http://127.0.0.1:$peer" \
  --initial-cluster "java=http://127.0.0.1:$peer" >"$work/etcd.log" 2>&1 &
pids+=($!)
settings=(--set ferrobase.memory.size=536870912 --set ferrobase.etcd.lease.ttl.ms=3000)
cluster=(--etcd "http://127.0.0.1:$client" --root "$work/root" "${settings[@]}")
mkdir -p "$work/root"
master_port=$(free_port)
zk_port=$(free_port)
# etcd may take a moment: the master retries its connection until then.
"$FERROBASE_BIN" master "${cluster[@]}" --port "$master_port" --zookeeper-port "$zk_port" >"$work/master.log" 2>&1 &
pids+=($!)
wait_for "$work/master.log" "master active" "${pids[-1]}"
for i in 1 2; do
  "$FERROBASE_BIN" regionserver "${cluster[@]}" --port "$(free_port)" >"$work/rs$i.log" 2>&1 &
  pids+=($!)
  wait_for "$work/rs$i.log" "listening on" "${pids[-1]}"
done

echo "== HBase Java client tests against a distributed ferrobase: master 127.0.0.1:$master_port, 2 region servers"
code=0
HBASE_TARGET=peer HBASE_SERVERS=2 HBASE_BOOTSTRAP="127.0.0.1:$master_port" \
  HBASE_ZOOKEEPER="127.0.0.1:$zk_port" FERROBASE_BIN= \
  scripts/hbase-client-tests.sh "$@" || code=$?
if [ "$code" -ne 0 ]; then
  for f in "$work"/master.log "$work"/rs*.log; do
    echo "---- $f (last 40 lines)" >&2
    tail -n 40 "$f" >&2
  done
fi
exit "$code"
