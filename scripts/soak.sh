#!/usr/bin/env bash
# Kill -9 soak of a ferrobase standalone (crates/ferrobase/tests/kill9_soak.rs):
# concurrent SYNC_WAL and FSYNC_WAL writers and a counter, the server killed
# with SIGKILL KILLS times at seeded random instants during frequent
# flushes, compactions and splits, restarted each time; at the end every
# acknowledged row must be there with its value and the counter must hold
# every acknowledged increment. The test command runs it with 20 kills.
#
#   scripts/soak.sh [KILLS] [SEED]      (default 1000 kills, release build)
set -euo pipefail
cd "$(dirname "$0")/.."
kills=${1:-1000}
seed=${2:-1592639501}
echo "== kill -9 soak: $kills kills, seed $seed"
# Built under the machine's build lock; the run itself does not hold it.
flock /tmp/ferrobase-build.lock cargo test --release -p ferrobase --test kill9_soak --no-run
FERROBASE_SOAK_KILLS=$kills FERROBASE_SOAK_SEED=$seed \
  cargo test --release -p ferrobase --test kill9_soak -- --nocapture
