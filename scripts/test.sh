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

# Distributed mode: the tests start a real etcd (Debian's etcd-server, v3
# API). Nothing needs protoc: every .proto is compiled with protox.
missing=()
command -v etcd >/dev/null || missing+=(etcd-server)
if [ ${#missing[@]} -gt 0 ]; then
  echo "== installing ${missing[*]}"
  SUDO=""
  [ "$(id -u)" -eq 0 ] || SUDO="sudo"
  $SUDO apt-get update
  $SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y "${missing[@]}"
fi

echo "== cargo fmt --check"
cargo fmt --all -- --check
echo "== cargo clippy (default members, all targets, -D warnings)"
cargo clippy --all-targets -- -D warnings
echo "== cargo test"
# Default members only: the RocksDB comparison crate is never built here.
cargo test --no-fail-fast
