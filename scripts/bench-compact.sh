#!/usr/bin/env bash
# Benchmarks one cleaning pass of `krec log compact` against Kafka 4.4.0's own Cleaner
# (interop CleanerReferee) on the same partition directory, with the same offset-map memory
# (issue 17). A measurement, not a test.
#
# Usage: bash scripts/bench-compact.sh [--segments N] [--keys K] [--value-size B]
#                                      [--map-mib M] [--dir DIR] [--keep]
#
#   --segments N     dirty segments (default 9), each holding every key once
#   --keys K         distinct keys (default 1000000): records per segment
#   --value-size B   bytes per value (default 100; with the defaults the log is about 1 GiB)
#   --map-mib M      log.cleaner.dedupe.buffer.size of both cleaners in MiB (default 64)
#   --dir DIR        where the temporary directory goes (default ${TMPDIR:-/tmp})
#   --keep           keep the directories (their paths are printed)
#
# Steps: builds krec in release mode (or uses $KREC) and the interop jars (mvn package, offline
# first); generates N segments with `krec gen` (segment i: keys key-0..key-(K-1), base offset
# i*K, uncompressed v2 batches of 1000 records, text values) plus a small active segment, and
# `krec log recover` writes their indexes and producer state; the directory is copied twice and
# read once into the page cache. Then, under GNU time (/usr/bin/time -v: wall clock, maximum
# resident set size):
#
#   java -Xmx(2*M+256)m ... CleanerReferee COPY1 NOW --always log.cleaner.dedupe.buffer.size=...
#   krec log compact COPY2 --now NOW --always          (same log.cleaner.dedupe.buffer.size)
#
# Prints the CPU model, the load average before and after (the machine may be shared), a table
# (cleaner, wall s, CPU s (user + system), clean-only s for Kafka (doClean alone, without JVM
# start and log load),
# MB/s of dirty bytes over wall time, peak RSS MiB), the speedup, and whether the two results
# are the same segments (sha256 of every .log file). Exit 0 either way; 2 on a usage or setup
# error.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"

SEGMENTS=9
KEYS=1000000
VALUE_SIZE=100
MAP_MIB=64
BASE_DIR="${TMPDIR:-/tmp}"
KEEP=0
usage() { sed -n '5,14p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 2; }
while [ $# -gt 0 ]; do
    case "$1" in
        --segments) SEGMENTS="${2:?}"; shift 2 ;;
        --keys) KEYS="${2:?}"; shift 2 ;;
        --value-size) VALUE_SIZE="${2:?}"; shift 2 ;;
        --map-mib) MAP_MIB="${2:?}"; shift 2 ;;
        --dir) BASE_DIR="${2:?}"; shift 2 ;;
        --keep) KEEP=1; shift ;;
        -h|--help) usage ;;
        *) echo "bench-compact: unknown argument $1" >&2; usage ;;
    esac
done
[ -x /usr/bin/time ] || { echo "bench-compact: needs GNU time at /usr/bin/time" >&2; exit 2; }

if [ -z "${KREC:-}" ]; then
    cargo build --release -q -p krec
    KREC="$(cargo metadata --format-version 1 --no-deps | python3 -c 'import json,sys; print(json.load(sys.stdin)["target_directory"])')/release/krec"
fi
JAVA_DIR=interop/java
if [ ! -d "$JAVA_DIR/target/lib" ] || [ ! -f "$JAVA_DIR/target/classes/dev/krecords/interop/CleanerReferee.class" ]; then
    mvn -q -B -o -f "$JAVA_DIR/pom.xml" package -DskipTests || mvn -q -B -f "$JAVA_DIR/pom.xml" package -DskipTests
fi
JAVA_CP="$ROOT/$JAVA_DIR/target/lib/*:$ROOT/$JAVA_DIR/target/classes"

WORK="$(mktemp -d "$BASE_DIR/krecords-bench-compact.XXXXXX")"
cleanup() { [ "$KEEP" = 1 ] && echo "kept: $WORK" || rm -rf "$WORK"; }
trap cleanup EXIT
SRC="$WORK/src/bench-0"
MAP_BYTES=$((MAP_MIB * 1024 * 1024))
T0=$(( ($(date +%s) - 86400) * 1000 ))
"$KREC" log create "$SRC" --config cleanup.policy=compact --config "log.cleaner.dedupe.buffer.size=$MAP_BYTES" \
    --config segment.bytes=1073741824 >/dev/null
for i in $(seq 0 "$SEGMENTS"); do
    n="$KEYS"
    [ "$i" = "$SEGMENTS" ] && n=1000 # the active segment
    base=$((i * KEYS))
    "$KREC" gen --records "$n" --key-size 11 --value-size "$VALUE_SIZE" --records-per-batch 1000 \
        --seed "$i" --base-offset "$base" --timestamp $((T0 + base)) \
        --output "$SRC/$(printf '%020d' "$base").log" >/dev/null
done
rm -f "$SRC/krec-clean-shutdown" "$SRC"/*.snapshot
"$KREC" log recover "$SRC" >/dev/null
for d in kafka ours; do cp -a "$WORK/src" "$WORK/$d"; done
cat "$WORK"/kafka/bench-0/*.log "$WORK"/ours/bench-0/*.log >/dev/null
DIRTY=$(($(cat "$SRC"/*.log | wc -c) - $(wc -c <"$SRC/$(printf '%020d' $((SEGMENTS * KEYS))).log")))
NOW=$((T0 + 3600000))

echo "CPU: $(lscpu | sed -n 's/^Model name: *//p' | head -n 1), $(nproc) cores"
echo "load before: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "log: $SEGMENTS dirty segments of $KEYS keys (every key in each), $((DIRTY / 1048576)) MiB dirty; offset map $MAP_MIB MiB"

measure() { # NAME OUT -- CMD...
    local name="$1" out="$2"; shift 3
    /usr/bin/time -v "$@" >"$out" 2>"$WORK/$name.time" || { echo "$name failed:"; tail -n 20 "$WORK/$name.time"; exit 1; }
    WALL=$(sed -n 's/.*Elapsed (wall clock) time (h:mm:ss or m:ss): //p' "$WORK/$name.time" \
        | awk -F: '{ if (NF == 3) print $1*3600 + $2*60 + $3; else print $1*60 + $2 }')
    RSS=$(( $(sed -n 's/.*Maximum resident set size (kbytes): //p' "$WORK/$name.time") / 1024 ))
    CPU=$(awk -F': ' '/User time|System time/ { s += $2 } END { printf "%.2f", s }' "$WORK/$name.time")
}
measure kafka "$WORK/kafka.json" -- java "-Xmx$((2 * MAP_MIB + 256))m" -cp "$JAVA_CP" dev.krecords.interop.CleanerReferee \
    "$WORK/kafka/bench-0" "$NOW" --always cleanup.policy=compact "log.cleaner.dedupe.buffer.size=$MAP_BYTES" \
    segment.bytes=1073741824
K_WALL=$WALL K_RSS=$RSS K_CPU=$CPU
K_CLEAN=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["clean_ms"] / 1000)' "$WORK/kafka.json")
measure ours "$WORK/ours.json" -- "$KREC" log compact "$WORK/ours/bench-0" --now "$NOW" --always
O_WALL=$WALL O_RSS=$RSS O_CPU=$CPU
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"

mbs() { python3 -c "import sys; print(f'{$DIRTY / 1e6 / float(sys.argv[1]):.1f}')" "$1"; }
printf '%-28s %8s %8s %10s %10s %12s\n' cleaner "wall s" "CPU s" "clean s" "MB/s" "peak RSS MiB"
printf '%-28s %8s %8s %10s %10s %12s\n' "Kafka 4.4.0 Cleaner (JVM)" "$K_WALL" "$K_CPU" "$K_CLEAN" "$(mbs "$K_WALL")" "$K_RSS"
printf '%-28s %8s %8s %10s %10s %12s\n' "krec log compact" "$O_WALL" "$O_CPU" "-" "$(mbs "$O_WALL")" "$O_RSS"
python3 - "$K_WALL" "$K_CLEAN" "$O_WALL" <<'EOF'
import sys
kw, kc, ow = map(float, sys.argv[1:])
print(f"speedup: {kw / ow:.2f}x over Kafka's whole run, {kc / ow:.2f}x over its doClean alone (goal: 2x)")
EOF
python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); print("ours:", {k: r[k] for k in ("next_dirty_offset","bytes_before","bytes_after","records_removed","map_keys","map_full")})' "$WORK/ours.json"
echo "kafka: $(cat "$WORK/kafka.json")"
if (cd "$WORK/kafka/bench-0" && sha256sum ./*.log) | cmp -s - <(cd "$WORK/ours/bench-0" && sha256sum ./*.log); then
    echo "same segments: yes (sha256 of every .log file)"
else
    echo "same segments: NO"
fi
