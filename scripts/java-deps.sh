#!/usr/bin/env bash
# Makes sure the Java side can run on a fresh Debian machine: a JDK 17 and
# Maven (installed with apt-get when missing), and every Maven artifact of
# interop/java (the HBase Java client interop tests) in ~/.m2, plugins and
# Surefire's JUnit provider included, so later runs work with `mvn -o`.
#
#   scripts/java-deps.sh          the interop tests' artifacts
#   scripts/java-deps.sh peer     also the real Apache HBase of scripts/hbase-peer.sh
#   scripts/java-deps.sh ycsb     also YCSB and its HBase binding (interop/ycsb,
#                                 scripts/bench-peer.sh)
#   scripts/java-deps.sh shell    also Apache HBase's shell (interop/hbase-shell,
#                                 scripts/hbase-shell-tests.sh)
#   scripts/java-deps.sh mapreduce  also HBase's MapReduce tools (interop/mapreduce,
#                                 scripts/mapreduce-tests.sh)
#   scripts/java-deps.sh hdfs     Hadoop's MiniDFSCluster instead of the interop tests (interop/hdfs-minicluster,
#                                 scripts/hdfs-minicluster.sh, the hdfs:// storage tests)
#   scripts/java-deps.sh peer ycsb   both
#
# Idempotent: when a project's pom has not changed since its artifacts were
# resolved (a stamp under ~/.m2), it does nothing and prints nothing.
set -euo pipefail
trap 'echo "java-deps.sh: line $LINENO failed: $BASH_COMMAND" >&2' ERR
cd "$(dirname "$0")/.."
root=$(pwd)

want_peer=0
want_ycsb=0
want_shell=0
want_mapreduce=0
want_interop=1
want_hdfs=0
for arg in "$@"; do
  case "$arg" in
    peer) want_peer=1 ;;
    ycsb) want_ycsb=1 ;;
    shell) want_shell=1 ;;
    mapreduce) want_mapreduce=1 ;;
    hdfs) want_hdfs=1; want_interop=0 ;;
    *) echo "usage: $0 [peer] [ycsb] [shell] [mapreduce] [hdfs]" >&2; exit 2 ;;
  esac
done

# --- JDK 17 and Maven --------------------------------------------------------
java_major() {
  # "17.0.15" -> 17; "1.8.0_392" -> 8
  local v
  v=$(java -XshowSettings:properties -version 2>&1 | sed -n 's/^ *java.specification.version = //p')
  case "$v" in 1.*) echo "${v#1.}" ;; *) echo "${v%%.*}" ;; esac
}
missing=()
if ! command -v javac >/dev/null || [ "$(java_major 2>/dev/null || echo 0)" -lt 17 ]; then
  missing+=(openjdk-17-jdk-headless)
fi
command -v mvn >/dev/null || missing+=(maven)
if [ ${#missing[@]} -gt 0 ]; then
  echo "== installing ${missing[*]}"
  SUDO=""
  [ "$(id -u)" -eq 0 ] || SUDO="sudo"
  $SUDO apt-get update -qq
  $SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null
fi
if [ "$(java_major)" -lt 17 ]; then
  echo "java on PATH is older than 17; set JAVA_HOME/PATH to a JDK 17 or newer" >&2
  exit 1
fi

# --- Maven artifacts -----------------------------------------------------------
m2="${MAVEN_REPO:-$HOME/.m2/repository}"
stamp_dir="$HOME/.m2/ferrobase-stamps"
mkdir -p "$stamp_dir"

# resolve DIR GOALS...: runs the goals online once per pom content.
# resolve DIR [--output FILE] MAVEN_ARGS...: FILE (relative to DIR) is what
# the run leaves in the project itself (a classpath file); a fresh clone
# lacks it even when ~/.m2 is complete, so its absence forces the run.
resolve() {
  local dir=$1; shift
  local output=""
  if [ "${1:-}" = "--output" ]; then
    output=$2
    shift 2
  fi
  local sum stamp
  sum=$(cat "$dir/pom.xml" "$0" | sha256sum | cut -c1-16)
  stamp="$stamp_dir/$(basename "$dir")-$sum"
  if [ -f "$stamp" ] && [ -d "$m2" ] && { [ -z "$output" ] || [ -f "$dir/$output" ]; }; then
    return 0
  fi
  echo "== resolving Maven artifacts of ${dir#"$root"/} into ${m2}"
  local log
  log=$(mktemp)
  if ! (cd "$dir" && mvn -B -q "$@") >"$log" 2>&1; then
    cat "$log" >&2
    rm -f "$log"
    echo "resolving the artifacts of $dir failed" >&2
    exit 1
  fi
  rm -f "$log"
  touch "$stamp"
}

# The interop tests: compile them and let Surefire fetch its JUnit Platform
# provider by running it on a tag no test has (no server is started).
if [ "$want_interop" -eq 1 ]; then
  resolve "$root/interop/java" \
    test -Dgroups=resolve-artifacts-only -Dsurefire.failIfNoSpecifiedTests=false
fi

if [ "$want_hdfs" -eq 1 ]; then
  # Hadoop's shaded hadoop-client-minicluster and the launcher compiled,
  # and the classpath file scripts/hdfs-minicluster.sh starts it with.
  resolve "$root/interop/hdfs-minicluster" --output target/classpath.txt \
    compile dependency:build-classpath -Dmdep.outputFile=target/classpath.txt
fi

if [ "$want_peer" -eq 1 ]; then
  # The peer: Apache HBase's server jars and their dependencies, and the
  # classpath file scripts/hbase-peer.sh starts it with.
  resolve "$root/interop/hbase-peer" --output target/classpath.txt \
    compile dependency:build-classpath -Dmdep.outputFile=target/classpath.txt
fi

if [ "$want_ycsb" -eq 1 ]; then
  # YCSB 0.17.0's core, the HBase client and the binding in interop/ycsb,
  # compiled, and the classpath file scripts/bench-peer.sh runs YCSB with.
  resolve "$root/interop/ycsb" --output target/classpath.txt \
    compile dependency:build-classpath -Dmdep.outputFile=target/classpath.txt
fi

if [ "$want_shell" -eq 1 ]; then
  resolve "$root/interop/hbase-shell" --output target/classpath.txt \
    compile dependency:build-classpath -Dmdep.outputFile=target/classpath.txt
fi

if [ "$want_mapreduce" -eq 1 ]; then
  resolve "$root/interop/mapreduce" --output target/classpath.txt \
    compile dependency:build-classpath -Dmdep.outputFile=target/classpath.txt
fi
