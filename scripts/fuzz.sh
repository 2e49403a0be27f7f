#!/usr/bin/env bash
# Coverage-guided fuzzing (cargo-fuzz, libFuzzer, AddressSanitizer) of every
# decoder of outside bytes: builds the targets of fuzz/ and runs each for
# SECONDS, then prints one line per target (executions, coverage, result).
#
#   scripts/fuzz.sh SECONDS [TARGET...]     all targets when none is named
#
# Exits non-zero when any target crashed (a panic is a crash), leaked, hit
# the 10 s per-input timeout or the 2 GiB RSS limit; the input that did it
# is under fuzz/target/artifacts/TARGET/ (the path is printed). Reproduce
# with `fuzz/target/x86_64-unknown-linux-gnu/release/TARGET ARTIFACT`.
#
# cargo-fuzz needs nightly compiler flags; RUSTC_BOOTSTRAP=1 lets the
# stable toolchain take them. Builds go to fuzz/target (or
# $FUZZ_TARGET_DIR), apart from the workspace's. Each target's corpus grows
# in fuzz/target/corpus/TARGET, seeded from the committed fuzz/corpus/TARGET
# (regenerate those with `cargo run --manifest-path fuzz/Cargo.toml
# --example make_seeds`). Targets run one at a time, each in one process
# (libFuzzer's default; `-jobs` would add worker processes and their logs).
# With FERROBASE_BUILD_LOCK=FILE the build holds `flock FILE` (machines
# whose builds must not overlap).
set -euo pipefail
cd "$(dirname "$0")/.."

if [ $# -lt 1 ] || ! [[ "$1" =~ ^[0-9]+$ ]]; then
  echo "usage: $0 SECONDS [TARGET...]" >&2
  exit 2
fi
secs=$1
shift

if ! cargo fuzz --version >/dev/null 2>&1; then
  echo "== installing cargo-fuzz"
  cargo install cargo-fuzz
fi

export RUSTC_BOOTSTRAP=1
export CARGO_TARGET_DIR="${FUZZ_TARGET_DIR:-$PWD/fuzz/target}"
triple=$(rustc -vV | sed -n 's/^host: //p')
bin_dir="$CARGO_TARGET_DIR/$triple/release"

if [ $# -gt 0 ]; then
  targets=("$@")
else
  mapfile -t targets < <(cargo fuzz list --fuzz-dir fuzz)
fi

build=(cargo fuzz build --fuzz-dir fuzz)
if [ -n "${FERROBASE_BUILD_LOCK:-}" ]; then
  build=(flock "$FERROBASE_BUILD_LOCK" "${build[@]}")
fi
echo "== building ${#targets[@]} fuzz target(s)"
start=$SECONDS
if [ $# -gt 0 ]; then
  for t in "${targets[@]}"; do "${build[@]}" "$t"; done
else
  "${build[@]}"
fi
echo "== built in $((SECONDS - start)) s"

work="$CARGO_TARGET_DIR"
rows=()
failed=()
for t in "${targets[@]}"; do
  corpus="$work/corpus/$t"
  artifacts="$work/artifacts/$t"
  log="$work/logs/$t.log"
  mkdir -p "$corpus" "$artifacts" "$(dirname "$log")"
  seeds=()
  [ -d "fuzz/corpus/$t" ] && seeds=("fuzz/corpus/$t")
  echo "== $t: ${secs} s"
  status=0
  # New inputs go to the first corpus directory (the work one); the seeds
  # are only read.
  "$bin_dir/$t" "$corpus" "${seeds[@]}" \
    -max_total_time="$secs" -rss_limit_mb=2048 -timeout=10 \
    -print_final_stats=1 -artifact_prefix="$artifacts/" >"$log" 2>&1 || status=$?
  execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
  cov=$(grep -o 'cov: [0-9]*' "$log" | tail -1 | cut -d' ' -f2)
  corp=$(grep -o 'corp: [0-9]*' "$log" | tail -1 | cut -d' ' -f2)
  result=ok
  if [ "$status" -ne 0 ]; then
    if grep -q 'ERROR: libFuzzer: timeout' "$log"; then
      result=timeout
    elif grep -q 'ERROR: LeakSanitizer' "$log"; then
      result=leak
    elif grep -q 'out-of-memory' "$log"; then
      result=oom
    else
      result=crash
    fi
    artifact=$(sed -n 's/.*Test unit written to \(.*\)$/\1/p' "$log" | tail -1)
    failed+=("$t: $result, input ${artifact:-(none written)}, log $log")
    grep -m1 -E "panicked at|ERROR: (AddressSanitizer|LeakSanitizer|libFuzzer)" "$log" || true
  fi
  rows+=("$(printf '%-28s %14s %8s %8s  %s' "$t" "${execs:-?}" "${cov:-?}" "${corp:-?}" "$result")")
done

echo
printf '%-28s %14s %8s %8s  %s\n' target execs cov corpus result
printf '%s\n' "${rows[@]}"
if [ ${#failed[@]} -gt 0 ]; then
  echo
  echo "FAILED (reproduce: $bin_dir/TARGET INPUT):"
  printf '  %s\n' "${failed[@]}"
  exit 1
fi
