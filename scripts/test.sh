#!/usr/bin/env bash
# Runs every test of ferrobase on a fresh machine: installs what the tests
# need, then format check, lints, and the whole test suite.
set -euo pipefail
cd "$(dirname "$0")/.."

# Tests need only the Rust toolchain today. Later issues add etcd-server and
# a Python venv with happybase here.
if ! command -v cargo >/dev/null; then
  echo "cargo is required (https://rustup.rs)" >&2
  exit 1
fi

echo "== cargo fmt --check"
cargo fmt --all -- --check
echo "== cargo clippy (default members, all targets, -D warnings)"
cargo clippy --all-targets -- -D warnings
echo "== cargo test"
# Default members only: the RocksDB comparison crate is never built here.
cargo test --no-fail-fast
