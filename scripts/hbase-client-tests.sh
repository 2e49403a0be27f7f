#!/usr/bin/env bash
# Runs the HBase Java client interop tests (interop/java): the unmodified
# Apache HBase 2.6 client (hbase-shaded-client) against a real
# `ferrobase standalone`, which the tests start on a free port and stop.
# Ends with JUnit's (Surefire's) summary; exits non-zero if a test failed.
#
#   scripts/hbase-client-tests.sh                  every test class, basic to advanced
#   scripts/hbase-client-tests.sh -Dtest=ConnectTest
#   scripts/hbase-client-tests.sh -Dtest='PutGetTest#versions*'
#
# Any argument is passed to Maven. Environment:
#   FERROBASE_BIN   the ferrobase binary to test; when unset, it is built
#                   (cargo build --release -p ferrobase) and taken from the
#                   cargo target directory
#   FERROBASE_PROFILE=debug  build and test the debug binary instead
#   FERROBASE_TLS=1  run them over TLS: test certificates are made (rcgen,
#                   crates/tls/examples/test_certs.rs) into a temporary
#                   directory, the server is TLS-only with client
#                   certificates required, and the unmodified client uses
#                   HBase 2.6's hbase.client.netty.tls.* settings
#   FERROBASE_AUTHZ=1  the server enforces permissions
#                   (hbase.security.authorization=true; this user, who starts
#                   it, is its superuser): AccessControlTest runs instead of
#                   skipping, e.g. FERROBASE_AUTHZ=1 scripts/hbase-client-tests.sh -Dtest=AccessControlTest
#   FERROBASE_TOKEN=1  the server requires authentication
#                   (hbase.security.authentication=kerberos: tokens over SASL
#                   DIGEST-MD5): tokens are minted with `ferrobase token
#                   create` into a temporary directory before the server starts
#                   on the data directory they are for, the suite's own
#                   connections authenticate with HADOOP_TOKEN_FILE_LOCATION,
#                   and TokenAuthTest runs instead of skipping, e.g.
#                   FERROBASE_TOKEN=1 FERROBASE_AUTHZ=1 scripts/hbase-client-tests.sh -Dtest=TokenAuthTest
#   HBASE_TARGET=peer  run the same tests against an already running server
#                   instead (e.g. the real Apache HBase of scripts/hbase-peer.sh),
#                   at HBASE_BOOTSTRAP (default 127.0.0.1:16020); nothing is built
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)

if [ "${HBASE_TARGET:-ferrobase}" != "peer" ] && [ -z "${FERROBASE_BIN:-}" ]; then
  target_dir=${CARGO_TARGET_DIR:-$root/target}
  profile=${FERROBASE_PROFILE:-release}
  case "$profile" in
    release) build=(--release) dir=release ;;
    debug) build=() dir=debug ;;
    *) echo "FERROBASE_PROFILE must be release or debug" >&2; exit 2 ;;
  esac
  echo "== building ferrobase (cargo build ${build[*]} -p ferrobase)"
  # One build at a time on this machine: cargo builds share the lock.
  flock /tmp/ferrobase-build.lock cargo build "${build[@]}" -q -p ferrobase
  FERROBASE_BIN="$target_dir/$dir/ferrobase"
  export FERROBASE_BIN
fi

# The tests run from interop/java: a relative path must not change meaning.
if [ -n "${FERROBASE_BIN:-}" ]; then
  FERROBASE_BIN=$(realpath "$FERROBASE_BIN")
  export FERROBASE_BIN
fi

if [ -n "${FERROBASE_TLS:-}" ] && [ -z "${FERROBASE_TLS_DIR:-}" ]; then
  FERROBASE_TLS_DIR=$(mktemp -d -t ferrobase-tls-XXXXXX)
  trap 'rm -rf "$FERROBASE_TLS_DIR"' EXIT
  echo "== test certificates in $FERROBASE_TLS_DIR"
  flock /tmp/ferrobase-build.lock cargo run -q -p ferrobase-tls --features test-certs \
    --example test_certs -- "$FERROBASE_TLS_DIR" >/dev/null
  export FERROBASE_TLS_DIR
fi

if [ -n "${FERROBASE_TOKEN:-}" ] && [ -z "${FERROBASE_TOKEN_DIR:-}" ]; then
  FERROBASE_TOKEN_DIR=$(mktemp -d -t ferrobase-token-XXXXXX)
  trap 'rm -rf "$FERROBASE_TOKEN_DIR" ${FERROBASE_TLS_DIR:+"$FERROBASE_TLS_DIR"}' EXIT
  FERROBASE_DATA_DIR="$FERROBASE_TOKEN_DIR/data"
  echo "== tokens in $FERROBASE_TOKEN_DIR (data directory $FERROBASE_DATA_DIR)"
  # The suite's user started the server: with authorization on it is a superuser.
  "$FERROBASE_BIN" token create --data-dir "$FERROBASE_DATA_DIR" --user "$(id -un)" \
    --out "$FERROBASE_TOKEN_DIR/suite.token" >/dev/null
  "$FERROBASE_BIN" token create --data-dir "$FERROBASE_DATA_DIR" --user alice \
    --out "$FERROBASE_TOKEN_DIR/alice.token" >/dev/null
  # Valid for 0 ms: expired by the time a client presents it.
  "$FERROBASE_BIN" token create --data-dir "$FERROBASE_DATA_DIR" --user alice \
    --set hbase.auth.token.max.lifetime=0 --out "$FERROBASE_TOKEN_DIR/expired.token" >/dev/null
  HADOOP_TOKEN_FILE_LOCATION="$FERROBASE_TOKEN_DIR/suite.token"
  export FERROBASE_TOKEN_DIR FERROBASE_DATA_DIR HADOOP_TOKEN_FILE_LOCATION
fi

scripts/java-deps.sh

offline=()
# java-deps.sh left every artifact in ~/.m2: no network needed from here on.
[ -n "${HBASE_CLIENT_TESTS_ONLINE:-}" ] || offline=(-o)

echo "== HBase Java client tests against ${HBASE_TARGET:-ferrobase} ${FERROBASE_BIN:-${HBASE_BOOTSTRAP:-127.0.0.1:16020}}"
cd interop/java
# Not -q: Surefire's per-class lines and closing summary are the point.
mvn -B -ntp "${offline[@]}" -Dstyle.color=never test "$@"
