#!/usr/bin/env bash
# interop/run.sh: tests krecords against its peers (Apache Kafka's own Java implementation first).
#
# Runs from any directory. Needs java (17+) and mvn; without them it says so and exits 0, or 1 when
# CI=true. Maven uses its default local repository (~/.m2). Ends with "N passed, N failed" and exits
# 1 when anything failed.
#
# Each step is a shell function that calls `pass NAME DETAIL` / `fail NAME DETAIL` for every check it
# makes; the STEPS list below says which run, in order. To add a step, write a `step_...` function
# and add its name to STEPS.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"

JAVA_DIR="interop/java"
VECTORS="tests/vectors/kafka-java"
# Quoted on use: the '*' is for java's classpath wildcard, not for the shell.
JAVA_CP="$ROOT/$JAVA_DIR/target/lib/*:$ROOT/$JAVA_DIR/target/classes"
PKG="dev.krecords.interop"

PASSED=0
FAILED=0
pass() { PASSED=$((PASSED + 1)); echo "PASS $1${2:+: $2}"; }
fail() { FAILED=$((FAILED + 1)); echo "FAIL $1${2:+: $2}"; }

# Print the last lines of a log file, indented and cut to 200 columns (for failures).
show_log() { tail -n "${2:-20}" "$1" | cut -c 1-200 | sed -e 's/^/    /'; }
# The same for the first lines.
show_head() { head -n "${2:-20}" "$1" | cut -c 1-200 | sed -e 's/^/    /'; }

jrun() { java -cp "$JAVA_CP" "$@"; }

# ---------------------------------------------------------------------------------------- steps

# Compile the Maven project and copy Kafka's jars into interop/java/target/lib.
step_java_build() {
    local log="$WORK/mvn.log"
    if mvn -q -B -Dstyle.color=never -f "$JAVA_DIR/pom.xml" package -DskipTests >"$log" 2>&1; then
        pass java-build "$(ls "$JAVA_DIR/target/lib" | wc -l | tr -d ' ') jars in $JAVA_DIR/target/lib"
    else
        fail java-build "mvn package failed:"
        show_log "$log" 40
        return 1
    fi
}

# Regenerate the Kafka vectors into a temporary folder: they must equal the committed ones exactly.
step_vectors_reproducible() {
    local out="$WORK/vectors" log="$WORK/generate.log"
    if ! jrun "$PKG.GenerateVectors" "$out" >"$log" 2>&1; then
        fail vectors-generate "GenerateVectors failed:"
        show_log "$log"
        return 0
    fi
    pass vectors-generate "$(tail -n 1 "$log")"
    if [ ! -d "$VECTORS" ]; then
        fail vectors-reproducible "$VECTORS does not exist; create it with: $(regenerate_hint)"
    elif diff -r "$out" "$VECTORS" >"$WORK/vectors.diff" 2>&1; then
        pass vectors-reproducible "$(ls "$VECTORS"/*.json | wc -l | tr -d ' ') files in $VECTORS identical to a fresh run"
    else
        fail vectors-reproducible "$VECTORS differs from a fresh run (regenerate: $(regenerate_hint)):"
        show_head "$WORK/vectors.diff" 12
    fi
}

regenerate_hint() {
    echo "java -cp '$JAVA_DIR/target/lib/*:$JAVA_DIR/target/classes' $PKG.GenerateVectors $VECTORS"
}

# The validator must accept Kafka's own bytes for every committed builder vector.
step_validator_selftest() {
    local dir="$WORK/selftest" log="$WORK/selftest.log"
    if ! jrun "$PKG.ExportVectorBins" "$VECTORS" "$dir" >"$log" 2>&1; then
        fail validator-selftest "ExportVectorBins failed:"
        show_log "$log"
        return 0
    fi
    if jrun "$PKG.ValidateBuilt" --quiet "$dir" >"$log" 2>&1; then
        pass validator-selftest "ValidateBuilt on Kafka's own bytes: $(tail -n 1 "$log")"
    else
        fail validator-selftest "ValidateBuilt rejected Kafka's own bytes:"
        show_log "$log"
    fi
}

# ---------------------------------------------------------------------------------------- the list
# Steps run in this order. A step that returns non-zero stops the run (use it when later steps
# cannot work, e.g. the Java build failed); otherwise every step runs.
STEPS=(
    step_java_build
    step_vectors_reproducible
    step_validator_selftest
    # --- later steps plug in here, for example: ---
    # step_validate_krec_built   krec build output checked by ValidateBuilt
    # step_broker                a real Kafka broker (jars in interop/java/target/lib) reads our segments
    # step_kafka_python          kafka-python reads and writes against krec
)

# ---------------------------------------------------------------------------------------- main

missing=()
for tool in java mvn; do
    command -v "$tool" >/dev/null 2>&1 || missing+=("$tool")
done
if [ "${#missing[@]}" -gt 0 ]; then
    echo "interop: ${missing[*]} not found; skipping the interop tests (install a JDK 17+ and Maven)."
    if [ "${CI:-}" = "true" ]; then
        echo "interop: CI=true, so this is a failure."
        exit 1
    fi
    exit 0
fi

# Scratch space for logs and regenerated files, removed on exit.
WORK="$(mktemp -d "${TMPDIR:-/tmp}/krecords-interop.XXXXXX")"
trap 'rm -rf "$WORK"' EXIT

for step in "${STEPS[@]}"; do
    echo "== $step"
    if ! "$step"; then
        echo "== $step cannot continue; later steps skipped"
        break
    fi
done

echo "$PASSED passed, $FAILED failed"
[ "$FAILED" -eq 0 ]
