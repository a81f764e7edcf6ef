#!/usr/bin/env bash
# Runs every test of the project: formatting, lints, the Rust test suites (unit, integration,
# property, vectors, hostile-input memory bounds, doc tests), the library examples, rustdoc with
# warnings as errors, the benchmarks in a smoke mode,
# every fuzz target for a bounded time, and the interop
# suite against Apache Kafka's Java implementation, a real broker and kafka-python.
#
# Usage: bash scripts/test.sh            (from anywhere)
#        SKIP_INTEROP=1 SKIP_FUZZ=1 bash scripts/test.sh   (Rust tests only)
#        FUZZ_SECONDS=60 bash scripts/test.sh               (longer fuzzing)
#        SKIP_PYTHON=1 bash scripts/test.sh                 (without the Python package's tests)
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

# Each step's heading says how long the one before it took (the run's time budget is watched).
STEP_STARTED=$SECONDS
step() {
    printf '\n==> (%d s since the last step) %s\n' "$((SECONDS - STEP_STARTED))" "$*"
    STEP_STARTED=$SECONDS
}

# Downloads that need the network more than the CPU run in the background while the Rust steps
# compile: the virtual environments of python/test.sh and of the interop suite (pyspark alone is
# over 300 MB; in line they cost CI about 2 minutes). The steps that use them wait first
# (`wait_for_downloads`); a download that failed here is tried again, and reported, by its own
# step, so its log here is only shown when it failed.
DOWNLOADS_LOG=$(mktemp -d "${TMPDIR:-/tmp}/krecords-downloads.XXXXXX")
DOWNLOADS=()
if [ "${SKIP_PYTHON:-0}" != "1" ]; then
    bash python/test.sh --venv-only >"$DOWNLOADS_LOG/python.log" 2>&1 &
    DOWNLOADS+=("$!:python/.venv:$DOWNLOADS_LOG/python.log")
fi
if [ "${SKIP_INTEROP:-0}" != "1" ]; then
    INTEROP_STEPS=step_python_venv bash interop/run.sh >"$DOWNLOADS_LOG/interop.log" 2>&1 &
    DOWNLOADS+=("$!:interop/.venv:$DOWNLOADS_LOG/interop.log")
fi
# shellcheck disable=SC2317 # called by the traps and below
stop_downloads() {
    local pid
    for pid in $(jobs -p); do kill "$pid" 2>/dev/null || true; done
    rm -rf "$DOWNLOADS_LOG"
}
trap stop_downloads EXIT
wait_for_downloads() {
    local entry pid what log
    for entry in ${DOWNLOADS[@]+"${DOWNLOADS[@]}"}; do
        IFS=: read -r pid what log <<<"$entry"
        if wait "$pid"; then
            echo "$what: ready (downloaded in the background)"
        else
            echo "$what: the background download failed (its step tries again); its log:"
            tail -n 20 "$log" | sed 's/^/    /'
        fi
    done
    DOWNLOADS=()
}

step "cargo fmt --check"
cargo fmt --all -- --check

step "cargo clippy"
cargo clippy --workspace --all-targets --locked -- -D warnings

step "the sources and Arrow layers without their remote feature (no object_store stack)"
cargo clippy -p krecords-source -p krecords-arrow --no-default-features --all-targets --locked -- -D warnings
cargo test -p krecords-source --no-default-features --lib --locked

step "no import cycles between the modules of a crate"
bash scripts/module-cycles.sh

step "cargo test"
cargo test --workspace --locked
TARGET_DIR=$(cargo metadata --format-version 1 --no-deps | python3 -c 'import json,sys; print(json.load(sys.stdin)["target_directory"])')

step "examples of the library crates run (each makes its own input in a temporary directory)"
# Built once for the whole workspace (`cargo test` built them already, with the workspace's
# features), then run from the target directory: `cargo run -p CRATE --example` would resolve
# each crate's features alone and compile most of the workspace again per crate (about 5
# minutes of CI).
cargo build -q --workspace --examples --locked
for crate in codec log topics ship source arrow export admin sql remote; do
    for example in crates/$crate/examples/*.rs; do
        name=$(basename "$example" .rs)
        echo "krecords-$crate --example $name"
        "$TARGET_DIR/debug/examples/$name" >/dev/null
    done
done

step "cargo doc (warnings are errors: broken links, undocumented public items)"
RUSTDOCFLAGS='-D warnings' cargo doc --workspace --no-deps --locked

# In the test profile: the criterion benches compile against the dependencies `cargo test` built
# and run each benchmark once (criterion's test mode). `cargo bench` would build everything again
# optimized, which cost CI about 4 minutes for the same check.
step "benchmarks compile and run once (no timing assertions)"
cargo test --workspace --locked --bench '*' >/dev/null

wait_for_downloads

if [ "${SKIP_PYTHON:-0}" != "1" ]; then
    step "Python package: venv, pip install ./python, clippy, mypy, pytest (python/test.sh)"
    bash python/test.sh
fi

# With the interop suite, the fuzz targets build and run in the background, at a lower priority
# (nice 10), during the suite: its scripts wait on brokers and JVMs for much of their time, and
# the instrumented build is 6-7 minutes of both cores. The suite's brokers and tools keep their pace, the fuzz report is printed after
# the suite, and either failing fails the run.
FUZZ_PID=""
FUZZ_LOG=$DOWNLOADS_LOG/fuzz.log
if [ "${SKIP_FUZZ:-0}" != "1" ]; then
    if [ "${SKIP_INTEROP:-0}" != "1" ]; then
        step "fuzz targets, ${FUZZ_SECONDS:-10} s each: started in the background (report after the interop suite)"
        nice -n 10 bash scripts/fuzz.sh "${FUZZ_SECONDS:-10}" >"$FUZZ_LOG" 2>&1 &
        FUZZ_PID=$!
    else
        step "fuzz targets, ${FUZZ_SECONDS:-10} s each (libFuzzer; crashes fail the run)"
        bash scripts/fuzz.sh "${FUZZ_SECONDS:-10}"
    fi
fi

interop_status=0
if [ "${SKIP_INTEROP:-0}" != "1" ]; then
    step "interop suite"
    # The krec binary `cargo test` built for the CLI's tests: `cargo build -p krec` would resolve
    # its features alone and compile much of the workspace again (over 2 minutes of CI).
    if [ -z "${KREC:-}" ] && [ -x "$TARGET_DIR/debug/krec" ]; then
        export KREC="$TARGET_DIR/debug/krec"
    fi
    bash interop/run.sh || interop_status=$?
fi

fuzz_status=0
if [ -n "$FUZZ_PID" ]; then
    step "fuzz targets, ${FUZZ_SECONDS:-10} s each (libFuzzer; crashes fail the run): waiting for the background run"
    wait "$FUZZ_PID" || fuzz_status=$?
    cat "$FUZZ_LOG"
fi

if [ "$interop_status" -ne 0 ] || [ "$fuzz_status" -ne 0 ]; then
    echo "FAILED: interop suite exit $interop_status, fuzz targets exit $fuzz_status" >&2
    exit 1
fi
