#!/usr/bin/env bash
# Runs every test of ferrobase on a fresh machine: installs what the tests
# need, then the docs check, format check, lints, and the whole test suite,
# the HBase Java client tests and the web UI in headless Chromium (whose
# script installs Debian's chromium and npm's playwright-core when missing).
set -euo pipefail
cd "$(dirname "$0")/.."

# Tests need the Rust toolchain, etcd-server, moto and Java (below).
if ! command -v cargo >/dev/null; then
  echo "cargo is required (https://rustup.rs)" >&2
  exit 1
fi

# Distributed mode: the tests start a real etcd (Debian's etcd-server, v3
# API). Nothing needs protoc: every .proto is compiled with protox.
missing=()
command -v etcd >/dev/null || missing+=(etcd-server)
# Network partition tests (crates/ferrobase/tests/partition_*.rs) put each
# process in a network namespace of its own with iproute2's `ip` (as root;
# they fail, not skip, when root cannot create namespaces).
command -v ip >/dev/null || missing+=(iproute2)
# S3 storage: the tests start a real S3 API, moto's server, installed with
# pip into .venv (crates/storage/src/fs/s3/testing.rs finds it there); the
# Thrift gateway tests run real happybase from the same .venv
# (crates/thrift/tests/happybase.rs). Debian's python3 makes venvs only
# with python3-venv.
venv_ready() {
  [ -x .venv/bin/moto_server ] && .venv/bin/python -c 'import happybase' >/dev/null 2>&1
}
if ! venv_ready; then
  command -v python3 >/dev/null || missing+=(python3)
  python3 -c 'import ensurepip, venv' >/dev/null 2>&1 || missing+=(python3-venv)
fi
if [ ${#missing[@]} -gt 0 ]; then
  echo "== installing ${missing[*]}"
  SUDO=""
  [ "$(id -u)" -eq 0 ] || SUDO="sudo"
  $SUDO apt-get update
  $SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y "${missing[@]}"
fi
if ! venv_ready; then
  echo "== installing moto (S3 server for the storage tests) and happybase (Thrift gateway tests) into .venv"
  [ -x .venv/bin/python ] || python3 -m venv .venv
  .venv/bin/pip install -q --upgrade 'moto[server]' happybase
fi

# HDFS storage: the hdfs:// tests start a real MiniDFSCluster (Hadoop's
# hadoop-client-minicluster, interop/hdfs-minicluster) in a JVM; this
# installs a JDK 17 and Maven when missing and fetches the artifacts into
# ~/.m2 once. FERROBASE_REQUIRE_HDFS makes a missing Java a failure
# instead of a skip (crates/storage/src/fs/hdfs/testing.rs).
./scripts/java-deps.sh hdfs
export FERROBASE_REQUIRE_HDFS=1
# The Rust HBase client's test against a real Apache HBase 2.6
# (crates/hbase-client/tests/against_hbase.rs, about 25 s) starts
# scripts/hbase-peer.sh; fetch its artifacts once and make a peer that
# cannot start a failure instead of a skip.
./scripts/java-deps.sh peer
export FERROBASE_REQUIRE_HBASE_PEER=1

# A one-off build gains nothing from incremental state (8 GB of it for this
# workspace); CI machines have limited disk.
export CARGO_INCREMENTAL=0

echo "== docs check (no session wording, no citations outside the repository, README ≤ 500 lines)"
./scripts/check-docs.sh
echo "== cargo fmt --check"
cargo fmt --all -- --check
echo "== cargo clippy (default members, all targets, -D warnings)"
cargo clippy --all-targets -- -D warnings
echo "== cargo doc (default members, no dependencies, -D warnings: broken intra-doc links fail)"
RUSTDOCFLAGS="-D warnings" cargo doc --no-deps
echo "== cargo test"
# Default members only: the RocksDB comparison crate is never built here.
cargo test --no-fail-fast
echo "== HBase Java client interop (the unmodified hbase-shaded-client 2.6 against ferrobase standalone)"
# scripts/java-deps.sh (run by the script) installs a JDK 17 and Maven when
# missing and fetches the client's artifacts into ~/.m2 once.
cargo build -q -p ferrobase
FERROBASE_BIN="${CARGO_TARGET_DIR:-$(pwd)/target}/debug/ferrobase" ./scripts/hbase-client-tests.sh
echo "== the same client over TLS (HBase 2.6's hbase.client.netty.tls.*, PEM stores; ferrobase TLS-only, client certificates required)"
FERROBASE_TLS=1 FERROBASE_BIN="${CARGO_TARGET_DIR:-$(pwd)/target}/debug/ferrobase" ./scripts/hbase-client-tests.sh
echo "== HBase's AccessController through the Java client (AccessControlClient grant/revoke, AccessDeniedException; authorization on)"
FERROBASE_AUTHZ=1 FERROBASE_BIN="${CARGO_TARGET_DIR:-$(pwd)/target}/debug/ferrobase" ./scripts/hbase-client-tests.sh -Dtest=AccessControlTest
echo "== token authentication through the Java client (SASL DIGEST-MD5: tokens from ferrobase token create and obtainToken; expired, forged and SIMPLE refused)"
FERROBASE_TOKEN=1 FERROBASE_AUTHZ=1 FERROBASE_BIN="${CARGO_TARGET_DIR:-$(pwd)/target}/debug/ferrobase" ./scripts/hbase-client-tests.sh -Dtest=TokenAuthTest
echo "== the same Java tests against a distributed ferrobase (etcd, a master, two region servers)"
FERROBASE_BIN="${CARGO_TARGET_DIR:-$(pwd)/target}/debug/ferrobase" ./scripts/hbase-client-tests-distributed.sh
echo "== YCSB workloads A and E through the HBase Java client (small; every operation must succeed)"
FERROBASE_BIN="${CARGO_TARGET_DIR:-$(pwd)/target}/debug/ferrobase" ./scripts/ycsb-hbase-smoke.sh
echo "== log9 through the Java client's BufferedMutator beside bench load (small: the script runs and the rows read back)"
FERROBASE_BIN="${CARGO_TARGET_DIR:-$(pwd)/target}/debug/ferrobase" ./scripts/bench-java-load.sh --rows 3000
echo "== Apache HBase's shell (hbase-shell 2.4.17, JRuby) running a transcript against ferrobase"
FERROBASE_BIN="${CARGO_TARGET_DIR:-$(pwd)/target}/debug/ferrobase" ./scripts/hbase-shell-tests.sh
echo "== HBase's MapReduce tools (hbase-mapreduce 2.6.4: RowCounter, CopyTable, Export, Import, ImportTsv) in Hadoop's LocalJobRunner"
FERROBASE_BIN="${CARGO_TARGET_DIR:-$(pwd)/target}/debug/ferrobase" ./scripts/mapreduce-tests.sh
echo "== web UI in headless Chromium (master, table and region server pages of a loaded standalone server)"
# scripts/web-ui-test.sh installs Debian's chromium and playwright-core
# (into ./.node) when missing; screenshots stay in target/web-ui/.
FERROBASE_BIN="${CARGO_TARGET_DIR:-$(pwd)/target}/debug/ferrobase" ./scripts/web-ui-test.sh
echo "== fuzzing: every cargo-fuzz target for 10 s from its seeds (scripts/fuzz.sh; the long runs are in docs/reliability.md)"
# Installs cargo-fuzz when missing; builds the targets into fuzz/target.
./scripts/fuzz.sh 10
