#!/usr/bin/env bash
# Apache HBase's own shell (the JRuby `hbase shell` of hbase-shell 2.4.17,
# the newest on Maven Central) against a real ferrobase standalone: runs
# interop/hbase-shell/transcript.hbase non-interactively (the shell exits
# non-zero on the first failed command) and compares what it printed, with
# times, timestamps, ports and start codes masked, to
# interop/hbase-shell/expected.txt.
#
#   scripts/hbase-shell-tests.sh            build the debug binary and test it
#   FERROBASE_BIN=path scripts/hbase-shell-tests.sh
#   UPDATE_GOLDEN=1 scripts/hbase-shell-tests.sh   rewrite expected.txt
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
if [ -z "${FERROBASE_BIN:-}" ]; then
  flock /tmp/ferrobase-build.lock cargo build -q -p ferrobase
  FERROBASE_BIN="${CARGO_TARGET_DIR:-$root/target}/debug/ferrobase"
fi
FERROBASE_BIN=$(realpath "$FERROBASE_BIN")
scripts/java-deps.sh shell

work=$(mktemp -d /tmp/ferrobase-hbase-shell.XXXXXX)
server_pid=""
cleanup() {
  if [ -n "$server_pid" ] && kill -0 "$server_pid" 2>/dev/null; then
    kill "$server_pid" 2>/dev/null || true
    wait "$server_pid" 2>/dev/null || true
  fi
  rm -rf "$work"
}
trap cleanup EXIT

free_port() {
  python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}
port=$(free_port)
zk_port=$(free_port)
"$FERROBASE_BIN" standalone --data-dir "$work/data" --port "$port" --zookeeper-port "$zk_port" >"$work/server.log" 2>&1 &
server_pid=$!
for _ in $(seq 1 300); do
  grep -q 'listening on' "$work/server.log" 2>/dev/null && break
  kill -0 "$server_pid" 2>/dev/null || { cat "$work/server.log" >&2; echo "ferrobase exited" >&2; exit 1; }
  sleep 0.1
done
grep -q 'listening on' "$work/server.log" || { echo "ferrobase did not start" >&2; exit 1; }

# HBase 2.4's shell finds the cluster through the master registry: the
# masters' ClientMetaService, which ferrobase answers on its one port.
# The shell finds the cluster as it does by default, through ZooKeeper
# (ferrobase's ZooKeeper registry endpoint); HBASE_SHELL_REGISTRY=master
# makes it use HBase's MasterRegistry (an RPC to the master) instead.
mkdir -p "$work/conf"
case "${HBASE_SHELL_REGISTRY:-zookeeper}" in
  zookeeper)
    registry="<property><name>hbase.zookeeper.quorum</name><value>127.0.0.1</value></property>
  <property><name>hbase.zookeeper.property.clientPort</name><value>$zk_port</value></property>" ;;
  master)
    registry="<property><name>hbase.client.registry.impl</name><value>org.apache.hadoop.hbase.client.MasterRegistry</value></property>
  <property><name>hbase.masters</name><value>127.0.0.1:$port</value></property>" ;;
  *) echo "HBASE_SHELL_REGISTRY must be zookeeper or master" >&2; exit 2 ;;
esac
cat >"$work/conf/hbase-site.xml" <<XML
<configuration>
  $registry
  <property><name>hbase.client.retries.number</name><value>5</value></property>
</configuration>
XML

echo "== HBase shell 2.4.17 transcript against ferrobase on 127.0.0.1:$port (registry: ${HBASE_SHELL_REGISTRY:-zookeeper})"
code=0
java -Duser.timezone=UTC -Dlog4j.configuration=none \
  -cp "$work/conf:$(cat interop/hbase-shell/target/classpath.txt)" \
  org.jruby.JarBootstrapMain -n <interop/hbase-shell/transcript.hbase >"$work/raw.txt" 2>&1 || code=$?

python3 - "$work/raw.txt" "$work/got.txt" <<'PY'
import re, sys
raw = open(sys.argv[1], encoding="utf-8", errors="replace").read().splitlines()
# Everything before the first prompt is JVM and logging noise.
start = next((i for i, l in enumerate(raw) if l.startswith("hbase:001:0>")), 0)
out = []
for line in raw[start:]:
    line = re.sub(r"Took [0-9.]+ seconds", "", line)
    line = re.sub(r"timestamp=\d{4}-\d\d-\d\dT[0-9:.]+", "timestamp=T", line)
    # A snapshot's creation time in list_snapshots.
    line = re.sub(r"\(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC\)", "(DATE)", line)
    line = re.sub(r"127\.0\.0\.1,\d+,\d+", "HOST,PORT,STARTCODE", line)
    line = re.sub(r"127\.0\.0\.1:\d+", "HOST:PORT", line)
    line = re.sub(r":0x[0-9a-f]+>", ":0x0>", line)
    line = re.sub(r" +", " ", line).rstrip()
    if line:
        out.append(line)
open(sys.argv[2], "w").write("\n".join(out) + "\n")
PY

if [ -n "${UPDATE_GOLDEN:-}" ]; then
  cp "$work/got.txt" interop/hbase-shell/expected.txt
  echo "wrote interop/hbase-shell/expected.txt"
fi
if [ "$code" -ne 0 ]; then
  cat "$work/raw.txt" >&2
  echo "the HBase shell exited with $code: a command failed (output above)" >&2
  exit 1
fi
if ! diff -u interop/hbase-shell/expected.txt "$work/got.txt"; then
  echo "the HBase shell's output differs from interop/hbase-shell/expected.txt (diff above)" >&2
  exit 1
fi
echo "HBase shell transcript passed: $(grep -c '^hbase:' "$work/got.txt") commands"
