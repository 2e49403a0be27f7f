#!/usr/bin/env bash
# Kill -9 soak, two modes:
# - standalone (crates/ferrobase/tests/kill9_soak.rs): a ferrobase
#   standalone under concurrent SYNC_WAL and FSYNC_WAL writers and a
#   counter, killed with SIGKILL KILLS times at seeded random instants during
#   frequent flushes, compactions and splits, restarted each time;
# - cluster (crates/ferrobase/tests/kill9_soak_cluster.rs): etcd, a master
#   and three region servers under the same writers plus an appender; a
#   random region server is killed KILLS times and a new one started, the
#   clients riding out each failover.
# At the end every acknowledged row must be there with its value and the
# counter must hold every acknowledged increment (in cluster mode: exactly,
# as increments and appends carry nonces). The test command runs the
# standalone mode with 20 kills and the cluster mode with 4.
#
#   scripts/soak.sh [KILLS] [SEED] [standalone|cluster]
#                    (default 1000 kills standalone, release build)
set -euo pipefail
cd "$(dirname "$0")/.."
kills=${1:-1000}
seed=${2:-1592639501}
mode=${3:-standalone}
case "$mode" in
  standalone) test=kill9_soak; var=FERROBASE_SOAK_KILLS ;;
  cluster) test=kill9_soak_cluster; var=FERROBASE_SOAK_CLUSTER_KILLS ;;
  *) echo "unknown mode '$mode' (standalone or cluster)" >&2; exit 2 ;;
esac
echo "== kill -9 soak ($mode): $kills kills, seed $seed"
# Built under the machine's build lock; the run itself does not hold it.
flock /tmp/ferrobase-build.lock cargo test --release -p ferrobase --test "$test" --no-run
env "$var=$kills" FERROBASE_SOAK_SEED="$seed" \
  cargo test --release -p ferrobase --test "$test" -- --nocapture
