#!/usr/bin/env bash
# Captures and decodes what the HBase Java client sends and receives for the
# first calls of an ordinary application (interop/java's RpcTraceScenario:
# connect through the RPC registry, locate meta, list tables, create a table,
# locate its region, put, get, scan, drop) against a real Apache HBase.
#
#   scripts/hbase-wire-trace.sh OUT_DIR
#
# How: a recording TCP proxy (scripts/hbase-wire-capture.py) listens on
# 127.0.0.2 ports 16000 and 16020 and forwards to 127.0.0.1; a dedicated
# HBase peer (scripts/hbase-peer.sh, data in OUT_DIR/peer) listens on
# 127.0.0.1 but advertises 127.0.0.2, so every connection, the client's and
# the servers' own, goes through the proxy. The peer of scripts/hbase-peer.sh
# must not be running (same ports). Everything stays on loopback.
#
# Writes OUT_DIR/decoded.txt (each frame since the scenario's first phase,
# decoded with the client's own protobuf classes; decoded-client.txt: the
# application's connections only), one hex dump per request
# and response (NNN-PHASE-Service.Method-request.hex / -response.hex), each
# connection's two byte streams in full (conn-*.hex) and frames.tsv.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
out=${1:?usage: $0 OUT_DIR}
mkdir -p "$out"
out=$(cd "$out" && pwd)
advertised=127.0.0.2

scripts/java-deps.sh peer
(cd interop/java &&
  mvn -B -q -o -Dstyle.color=never test-compile dependency:build-classpath -Dmdep.outputFile=target/test-classpath.txt)
cp="$root/interop/java/target/test-classes:$(cat interop/java/target/test-classpath.txt)"
jvm=(-Xmx256m -XX:+IgnoreUnrecognizedVMOptions --add-opens=java.base/java.nio=ALL-UNNAMED
  --add-opens=java.base/java.lang=ALL-UNNAMED --add-opens=java.base/sun.nio.ch=ALL-UNNAMED
  -Dorg.apache.hbase.thirdparty.io.netty.tryReflectionSetAccessible=true)

rm -f "$out"/*.hex "$out"/frames.tsv "$out"/phases.tsv "$out"/decoded.txt
python3 "$root/scripts/hbase-wire-capture.py" "$out" "$advertised" 127.0.0.1 16000 16020 &
proxy=$!
peer_dir="$out/peer"
cleanup() {
  scripts/hbase-peer.sh stop "$peer_dir" >/dev/null || true
  kill -INT "$proxy" 2>/dev/null || true
  wait "$proxy" 2>/dev/null || true
}
trap cleanup EXIT
sleep 1
HBASE_PEER_SET="hbase.master.hostname=$advertised hbase.unsafe.regionserver.hostname=$advertised" \
  scripts/hbase-peer.sh start "$peer_dir"
status=0
HBASE_TARGET=peer HBASE_BOOTSTRAP="$advertised:16020" \
  java "${jvm[@]}" -cp "$cp" io.ferrobase.interop.trace.RpcTraceScenario "$out" || status=$?
sleep 1
trap - EXIT
cleanup
java "${jvm[@]}" -cp "$cp" io.ferrobase.interop.trace.RpcTraceDecoder "$out"
# The application's own frames only: without the master's and region server's traffic.
awk '/^=== /{show = ($0 !~ /server-internal/)} show' "$out/decoded.txt" >"$out/decoded-client.txt"
rm -rf "$peer_dir"
echo "decoded: $out/decoded.txt"
exit $status
