#!/usr/bin/env bash
# tern-router's extras, built and run so they cannot rot (matchit's fuzz
# target rotted because its CI never built it):
# - the fuzz crate (its own workspace, outside the main one) must compile,
#   lint and stay formatted;
# - the benchmark lab must build, and every router must still answer every
#   benchmark path correctly, in criterion's test mode (each benchmark runs
#   once after the lab has checked the answers);
# - the callgrind driver must still run.
# Recorded numbers and how to reproduce them: crates/tern-router/BENCHMARKS.md.
set -euo pipefail
cd "$(dirname "$0")/.."

step() { printf '\n== %s ==\n' "$*"; }

step "tern-router fuzz crate"
# libfuzzer-sys compiles on stable; only running the target (cargo fuzz run)
# needs nightly sanitizer flags, so CI checks it without them.
(
  cd crates/tern-router/fuzz
  export CARGO_TARGET_DIR="$OLDPWD/target"
  cargo fmt --check
  cargo check --locked --bins
  cargo clippy --locked --bins -- -D warnings
)

step "tern-router benches (criterion test mode)"
cargo test -p tern-router --benches --locked

step "tern-router mixed-cycle driver"
for router in tern-router matchit path-tree actix-router; do
  cargo run -q -p tern-router --example mixed_cycle --locked -- "$router" 1
done
