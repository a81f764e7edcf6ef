#!/usr/bin/env bash
# Runs every cargo-fuzz target of fuzz/ for a bounded time and fails on any crash.
#
# Usage: bash scripts/fuzz.sh [SECONDS_PER_TARGET] [TARGET...]
#        SECONDS_PER_TARGET defaults to 30; CI passes about 20. Without TARGETs, all of them.
#
# Steps: writes the seed corpus from tests/vectors into fuzz/corpus/<target>/ (fuzz/seed, a small
# Rust program); builds every target once with the instrumentation `cargo fuzz build -a` would
# use (libFuzzer coverage, AddressSanitizer, debug assertions and overflow checks; cargo-fuzz
# itself is neither needed nor installed); replays
# the committed crash inputs of fuzz/regressions/<target>/; runs each target for
# SECONDS_PER_TARGET (libFuzzer -max_total_time), FUZZ_JOBS of them at a time (default: the
# number of cores), and prints the executions per target. A crash,
# a timeout (one input over 10 s), an out-of-memory (RSS over 2 GiB, or one allocation over
# 64 MiB) or a failed replay fails the script; the crashing input stays in
# fuzz/artifacts/<target>/ and its path is printed with a command to reproduce it.
#
# Environment: FUZZ_TARGET_DIR for the instrumented build (default: $CARGO_TARGET_DIR/fuzz if
# CARGO_TARGET_DIR is set, else fuzz/target). The seed program builds in the root workspace's
# target directory. A cold build of the targets takes about 5-7 minutes on 2 cores.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

SECONDS_PER_TARGET=${1:-30}
shift || true
case "$SECONDS_PER_TARGET" in
    '' | *[!0-9]*) echo "usage: scripts/fuzz.sh [SECONDS_PER_TARGET] [TARGET...]" >&2; exit 2 ;;
esac
# The instrumented build: FUZZ_TARGET_DIR, else $CARGO_TARGET_DIR/fuzz (kept between runs and
# clones when CARGO_TARGET_DIR is), else fuzz/target.
if [ -n "${CARGO_TARGET_DIR:-}" ]; then
    FUZZ_TARGET_DIR=${FUZZ_TARGET_DIR:-$CARGO_TARGET_DIR/fuzz}
else
    FUZZ_TARGET_DIR=${FUZZ_TARGET_DIR:-$PWD/fuzz/target}
fi

step() { printf '\n==> %s\n' "$*"; }

# -Zsanitizer needs a nightly toolchain. Prefer rustup's nightly; otherwise let
# the installed stable toolchain accept the unstable flags.
if cargo +nightly --version >/dev/null 2>&1; then
    FUZZ_CARGO=(cargo +nightly)
else
    echo "no nightly toolchain: using the stable one with RUSTC_BOOTSTRAP=1" >&2
    export RUSTC_BOOTSTRAP=1
    FUZZ_CARGO=(cargo)
fi

# The instrumentation cargo-fuzz (`cargo fuzz build -a`) would ask for, set here so that a fresh
# machine need not build cargo-fuzz itself from source (about 3 minutes of CI): libFuzzer's
# coverage counters, comparison tracing and stack depth, AddressSanitizer, `cfg(fuzzing)`, debug
# assertions and overflow checks. `--target` keeps the flags off build scripts and proc macros.
TRIPLE=$(rustc -vV | sed -n 's/^host: //p')
FUZZ_RUSTFLAGS="-Cpasses=sancov-module -Cllvm-args=-sanitizer-coverage-level=4"
FUZZ_RUSTFLAGS+=" -Cllvm-args=-sanitizer-coverage-inline-8bit-counters"
FUZZ_RUSTFLAGS+=" -Cllvm-args=-sanitizer-coverage-pc-table"
FUZZ_RUSTFLAGS+=" -Cllvm-args=-sanitizer-coverage-trace-compares"
FUZZ_RUSTFLAGS+=" -Cllvm-args=-sanitizer-coverage-stack-depth"
FUZZ_RUSTFLAGS+=" --cfg fuzzing -Cdebug-assertions -Coverflow-checks -Zsanitizer=address"
FUZZ_RUSTFLAGS+=" -Cforce-frame-pointers"

# Per-target libFuzzer options: byte-level targets take inputs up to 32 KiB, structured ones
# (read through `arbitrary`) the default 4 KiB, the tiny parsers 256 bytes, log directory
# images (log_recovery) 8 KiB.
max_len() {
    case "$1" in
        entries | explain | convert | stats_what_if | decompress_* | client_response | ship_stream) echo 32768 ;;
        legacy_deep | log_recovery) echo 8192 ;;
        control | varint) echo 256 ;;
        *) echo 4096 ;;
    esac
}

# Every [[bin]] of fuzz/Cargo.toml is a target.
ALL_TARGETS=$(sed -n '/^\[\[bin\]\]/,/^name/s/^name = "\(.*\)"/\1/p' fuzz/Cargo.toml)
if [ "$#" -gt 0 ]; then
    TARGETS="$*"
else
    TARGETS=$ALL_TARGETS
fi

step "seed corpus from tests/vectors"
# The seed writer is a member of the root workspace. Built with `--workspace --examples`, its
# features resolve as in `cargo test --workspace`, so after the tests nothing compiles again but
# the program itself (`-p krecords-fuzz-seed` alone would compile most dependencies anew).
cargo build --quiet --locked --workspace --examples --bin krecords-fuzz-seed
ROOT_TARGET_DIR=$(cargo metadata --format-version 1 --no-deps \
    | python3 -c 'import json,sys; print(json.load(sys.stdin)["target_directory"])')
"$ROOT_TARGET_DIR/debug/krecords-fuzz-seed" tests/vectors fuzz/corpus

step "building the fuzz targets"
RUSTFLAGS="$FUZZ_RUSTFLAGS" RUSTDOCFLAGS="$FUZZ_RUSTFLAGS" "${FUZZ_CARGO[@]}" build --locked --release \
    --manifest-path fuzz/Cargo.toml -p krecords-fuzz --bins --target "$TRIPLE" --target-dir "$FUZZ_TARGET_DIR"
BIN_DIR="$FUZZ_TARGET_DIR/$TRIPLE/release"

LOG_DIR=$(mktemp -d)
trap 'rm -rf "$LOG_DIR"' EXIT

for target in $TARGETS; do
    if [ ! -x "$BIN_DIR/$target" ]; then
        echo "unknown target $target (targets: $(echo $ALL_TARGETS))" >&2
        exit 2
    fi
done

# One target: replays its regressions, fuzzes it, and writes what it found to
# $LOG_DIR/<target>.out (printed in target order at the end), its execution count to
# $LOG_DIR/<target>.runs and, if it failed, the reason to $LOG_DIR/<target>.failed.
fuzz_one() {
    local target=$1 bin="$BIN_DIR/$1" out="$LOG_DIR/$1.out" log="$LOG_DIR/$1.log" status runs artifact
    mkdir -p "fuzz/corpus/$target" "fuzz/artifacts/$target"
    : >"$out"
    if compgen -G "fuzz/regressions/$target/*" >/dev/null; then
        echo "$target: replaying fuzz/regressions/$target" >>"$out"
        if ! "$bin" -runs=1 fuzz/regressions/"$target"/* >"$LOG_DIR/$target.replay" 2>&1; then
            grep -E -A3 'panicked at|ERROR: ' "$LOG_DIR/$target.replay" | head -20 >>"$out" || true
            echo "FAILED: $target regression replay (fuzz/regressions/$target)" >>"$out"
            echo "$target (regression replay)" >>"$LOG_DIR/$target.failed"
        fi
    fi
    set +e
    "$bin" "fuzz/corpus/$target" \
        -artifact_prefix="fuzz/artifacts/$target/" \
        -max_total_time="$SECONDS_PER_TARGET" \
        -max_len="$(max_len "$target")" \
        -timeout=10 -rss_limit_mb=2048 -malloc_limit_mb=64 \
        -print_final_stats=1 >"$log" 2>&1
    status=$?
    set -e
    runs=$(grep -E '^stat::number_of_executed_units:' "$log" | awk '{print $2}' | tail -1 || true)
    echo "${runs:-?}" >"$LOG_DIR/$target.runs"
    if [ "$status" -ne 0 ]; then
        grep -E -A3 'panicked at|ERROR: libFuzzer|SUMMARY' "$log" | head -30 >>"$out" || true
        artifact=$(grep -oE 'Test unit written to [^ ]+' "$log" | tail -1 | sed 's/Test unit written to //')
        {
            echo "FAILED: $target crashed after ${runs:-?} executions; input kept in ${artifact:-fuzz/artifacts/$target/}"
            echo "  reproduce: $bin ${artifact:-fuzz/artifacts/$target/<file>}   (or, with cargo-fuzz: cd fuzz && cargo +nightly fuzz run -a $target ../<file>)"
        } >>"$out"
        echo "$target" >>"$LOG_DIR/$target.failed"
    else
        echo "$target: ${runs:-?} executions in ${SECONDS_PER_TARGET}s, no crash" >>"$out"
    fi
}

# FUZZ_JOBS targets at a time (default: one per core): each libFuzzer process uses one core,
# and the time per target stays SECONDS_PER_TARGET.
FUZZ_JOBS=${FUZZ_JOBS:-$(nproc 2>/dev/null || echo 1)}
step "fuzzing each target for ${SECONDS_PER_TARGET}s, $FUZZ_JOBS at a time"
for target in $TARGETS; do
    while [ "$(jobs -rp | wc -l)" -ge "$FUZZ_JOBS" ]; do
        wait -n || true
    done
    fuzz_one "$target" &
done
wait

failed=()
for target in $TARGETS; do
    cat "$LOG_DIR/$target.out"
    if [ -f "$LOG_DIR/$target.failed" ]; then
        while IFS= read -r reason; do failed+=("$reason"); done <"$LOG_DIR/$target.failed"
    fi
done

step "executions per target (${SECONDS_PER_TARGET}s each)"
for target in $TARGETS; do
    printf '%-20s %s\n' "$target" "$(cat "$LOG_DIR/$target.runs" 2>/dev/null || echo 'not run')"
done

if [ "${#failed[@]}" -gt 0 ]; then
    printf '\nfuzzing FAILED: %s\n' "${failed[*]}"
    exit 1
fi
echo
echo "fuzzing passed"
