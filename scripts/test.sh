#!/usr/bin/env bash
# Runs every test of the project: formatting, lints, the Rust test suites (unit, integration,
# property, vectors, doc tests), the benchmark harness in a short smoke mode, and the interop
# suite against Apache Kafka's Java implementation, a real broker and kafka-python.
#
# Usage: bash scripts/test.sh            (from anywhere)
#        SKIP_INTEROP=1 bash scripts/test.sh   (Rust only)
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

step() { printf '\n==> %s\n' "$*"; }

step "cargo fmt --check"
cargo fmt --all -- --check

step "cargo clippy"
cargo clippy --workspace --all-targets --locked -- -D warnings

step "cargo test"
cargo test --workspace --locked

step "benchmarks compile and run once (no timing assertions)"
cargo bench --workspace --locked -- --test >/dev/null

if [ "${SKIP_INTEROP:-0}" != "1" ]; then
    step "interop suite"
    bash interop/run.sh
fi
