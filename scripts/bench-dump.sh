#!/usr/bin/env bash
# Benchmarks `krec dump` against Kafka's kafka-dump-log (DumpLogSegments) on one generated segment.
#
# Usage: bash scripts/bench-dump.sh [--size MIB] [--compression C] [--content text|random|json]
#                                   [--runs N] [--java-runs N] [--dir DIR] [--keep]
#
#   --size MIB        segment size in MiB (default 1024 = 1 GiB; CI can pass e.g. 8)
#   --compression C   codec of the generated batches: none (default), gzip, snappy, lz4, zstd[:L]
#   --content K       what values hold (krec gen --content; default text)
#   --runs N          runs of each krec measurement, the fastest reported (default 3)
#   --java-runs N     runs of kafka-dump-log (default 1; 0 skips it)
#   --dir DIR         where the temporary directory goes (default ${TMPDIR:-/tmp})
#   --keep            keep the generated segment (its path is printed)
#
# Steps: builds krec in release mode (cargo build --release -p krec; or uses $KREC); checks the
# free disk space with df; generates a v2 segment named 00000000000000000000.log (DumpLogSegments
# wants a numeric name) with `krec gen` -- 1000-record batches, 100-byte values, no keys; the
# record count is calibrated on a 100 000-record sample so the file comes out at about --size MiB
# whatever the codec -- and reads it once so every tool starts from the page cache. Then it
# measures, with GNU time (/usr/bin/time -v: wall clock and maximum resident set size),
# stdout to /dev/null:
#
#   krec dump --deep FILE                            (the text kafka-dump-log --deep-iteration prints)
#   krec dump --deep --format json FILE              (JSON Lines, records rendered as UTF-8 text)
#   krec dump --print-data FILE                      (text with keys and payloads)
#   java $KAFKA_HEAP_OPTS $KAFKA_JVM_PERFORMANCE_OPTS -cp 'interop/java/target/lib/*' \
#        org.apache.kafka.tools.DumpLogSegments --deep-iteration --files FILE
#
# The JVM gets what bin/kafka-dump-log.sh (via kafka-run-class.sh) gives it: KAFKA_HEAP_OPTS
# defaults to -Xmx256M and KAFKA_JVM_PERFORMANCE_OPTS to the G1 options of kafka-run-class.sh;
# both can be overridden from the environment. If it dies of OutOfMemoryError the script says so
# and retries with -Xmx1G, then -Xmx4G. Kafka's jars come from interop/java/target/lib (run
# interop/run.sh, or mvn -f interop/java/pom.xml package, once); without them or without java
# the Java row is skipped with a note.
#
# Prints a table: tool, wall seconds, CPU seconds (user + system, all threads), MiB/s (segment MiB /
# wall), peak RSS MiB, and the ratios kafka-dump-log / tool of wall and of CPU time ("x faster"),
# then whether the issue's goal holds: krec dump --deep at least 20x faster (wall) than
# kafka-dump-log --deep-iteration with peak RSS under 64 MiB. On a busy machine wall times include
# waiting for a CPU (the load average is printed); CPU times do not.
# Exit 0 either way (it is a measurement); 2 on a usage or setup error.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"

SIZE_MIB=1024
COMPRESSION=none
CONTENT=text
RUNS=3
JAVA_RUNS=1
BASE_DIR="${TMPDIR:-/tmp}"
KEEP=0
usage() { sed -n '3,12p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 2; }
while [ $# -gt 0 ]; do
    case "$1" in
        --size) SIZE_MIB="${2:-}"; shift 2 ;;
        --compression) COMPRESSION="${2:-}"; shift 2 ;;
        --content) CONTENT="${2:-}"; shift 2 ;;
        --runs) RUNS="${2:-}"; shift 2 ;;
        --java-runs) JAVA_RUNS="${2:-}"; shift 2 ;;
        --dir) BASE_DIR="${2:-}"; shift 2 ;;
        --keep) KEEP=1; shift ;;
        -h | --help) usage ;;
        *) echo "bench-dump: unknown argument $1" >&2; usage ;;
    esac
done
for n in "$SIZE_MIB" "$RUNS" "$JAVA_RUNS"; do
    case "$n" in '' | *[!0-9]*) echo "bench-dump: not a number: '$n'" >&2; exit 2 ;; esac
done
[ "$SIZE_MIB" -ge 1 ] && [ "$RUNS" -ge 1 ] || { echo "bench-dump: --size and --runs must be >= 1" >&2; exit 2; }

step() { printf '==> %s\n' "$*" >&2; }

# GNU time: /usr/bin/time -v reports the maximum resident set size.
TIME=/usr/bin/time
if ! "$TIME" -v true >/dev/null 2>&1; then
    if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
        step "installing GNU time (apt-get install time)"
        apt-get install -y -q time >/dev/null
    else
        echo "bench-dump: GNU time is needed at /usr/bin/time (apt-get install time)" >&2
        exit 2
    fi
fi

# krec, release build.
if [ -z "${KREC:-}" ]; then
    step "cargo build --release -p krec"
    cargo build --release -q -p krec
    target="$(cargo metadata --format-version 1 --no-deps \
        | python3 -c 'import json, sys; print(json.load(sys.stdin)["target_directory"])')"
    KREC="$target/release/krec"
fi
[ -x "$KREC" ] || { echo "bench-dump: $KREC is not an executable" >&2; exit 2; }

# Disk: the segment, the calibration sample, and room to spare.
need_kib=$((SIZE_MIB * 1024 * 11 / 10 + 64 * 1024))
free_kib="$(df -Pk "$BASE_DIR" | awk 'NR == 2 { print $4 }')"
if [ "$free_kib" -lt "$need_kib" ]; then
    echo "bench-dump: $BASE_DIR has $((free_kib / 1024)) MiB free, needs $((need_kib / 1024)) MiB" >&2
    exit 2
fi
WORK="$(mktemp -d "$BASE_DIR/krec-bench-dump.XXXXXX")"
if [ "$KEEP" = 1 ]; then
    trap 'echo "kept $WORK" >&2' EXIT
else
    trap 'rm -rf "$WORK"' EXIT
fi
FILE="$WORK/00000000000000000000.log"
GEN=(--magic 2 --compression "$COMPRESSION" --content "$CONTENT" --value-size 100 --key-size 0
     --records-per-batch 1000)

# Calibrate the record count on a sample, so the segment is about SIZE_MIB whatever the codec.
step "calibrating: krec gen ${GEN[*]} --records 100000"
"$KREC" gen "${GEN[@]}" --records 100000 --output "$WORK/sample.log" >/dev/null
sample_bytes="$(stat -c %s "$WORK/sample.log")"
rm -f "$WORK/sample.log"
records=$((SIZE_MIB * 1048576 * 100000 / sample_bytes))
records=$(((records + 999) / 1000 * 1000))
step "generating: krec gen ${GEN[*]} --records $records --output $FILE"
"$KREC" gen "${GEN[@]}" --records "$records" --output "$FILE" >/dev/null
bytes="$(stat -c %s "$FILE")"
mib="$(awk -v b="$bytes" 'BEGIN { printf "%.1f", b / 1048576 }')"
cat "$FILE" >/dev/null # into the page cache, for every tool alike

# measure NAME CMD...: runs CMD with stdout to /dev/null under GNU time and prints
# "wall_seconds cpu_seconds peak_rss_kib exit_code" (cpu: user + system, all threads; the stderr of
# the run is kept in $WORK/NAME.err).
measure() {
    local name="$1" rc=0 t0 t1
    shift
    t0="${EPOCHREALTIME:-}"
    "$TIME" -v -o "$WORK/$name.time" "$@" >/dev/null 2>"$WORK/$name.err" || rc=$?
    t1="${EPOCHREALTIME:-}"
    # Wall time from bash's microsecond clock when it has one (GNU time rounds to 10 ms).
    awk -v rc="$rc" -v t0="${t0/,/.}" -v t1="${t1/,/.}" '
        /Elapsed \(wall clock\) time/ {
            n = split($NF, p, ":"); s = 0
            for (i = 1; i <= n; i++) s = s * 60 + p[i]
        }
        /User time \(seconds\)/ { cpu += $NF }
        /System time \(seconds\)/ { cpu += $NF }
        /Maximum resident set size/ { rss = $NF }
        END { if (t0 != "" && t1 != "") s = t1 - t0; printf "%.3f %.2f %d %d\n", s, cpu, rss, rc }' "$WORK/$name.time"
}

ROWS=()
# best NAME RUNS LABEL CMD...: the fastest of RUNS runs becomes a table row.
best() {
    local name="$1" runs="$2" label="$3" i best_wall="" best_cpu="" best_rss="" wall cpu rss rc
    shift 3
    for ((i = 1; i <= runs; i++)); do
        read -r wall cpu rss rc < <(measure "$name" "$@")
        if [ "$rc" != 0 ]; then
            echo "bench-dump: $label exited $rc:" >&2
            tail -5 "$WORK/$name.err" >&2
            return 1
        fi
        if [ -z "$best_wall" ] || awk -v a="$wall" -v b="$best_wall" 'BEGIN { exit !(a < b) }'; then
            best_wall="$wall"
            best_cpu="$cpu"
            best_rss="$rss"
        fi
        step "$label: run $i: ${wall}s wall, ${cpu}s CPU, peak RSS $((rss / 1024)) MiB"
    done
    ROWS+=("$label|$best_wall|$best_cpu|$best_rss")
}

step "segment: $FILE, $mib MiB, $records records, compression $COMPRESSION, content $CONTENT"
best krec-deep "$RUNS" "krec dump --deep" "$KREC" dump --deep "$FILE"
best krec-json "$RUNS" "krec dump --deep --format json" "$KREC" dump --deep --format json "$FILE"
best krec-data "$RUNS" "krec dump --print-data" "$KREC" dump --print-data "$FILE"

JAVA_NOTE=""
JAVA_WALL=""
JAVA_CPU=""
JAVA_CP="$ROOT/interop/java/target/lib/*"
if [ "$JAVA_RUNS" = 0 ]; then
    JAVA_NOTE="kafka-dump-log skipped (--java-runs 0)"
elif ! command -v java >/dev/null 2>&1; then
    JAVA_NOTE="kafka-dump-log skipped: no java"
elif ! ls "$ROOT"/interop/java/target/lib/kafka-tools-*.jar >/dev/null 2>&1; then
    JAVA_NOTE="kafka-dump-log skipped: no Kafka jars in interop/java/target/lib (run interop/run.sh once)"
else
    # As bin/kafka-run-class.sh sets them.
    HEAP="${KAFKA_HEAP_OPTS:--Xmx256M}"
    PERF="${KAFKA_JVM_PERFORMANCE_OPTS:--server -XX:+UseG1GC -XX:MaxGCPauseMillis=20 -XX:InitiatingHeapOccupancyPercent=35 -XX:+ExplicitGCInvokesConcurrent -XX:MaxInlineLevel=15 -Djava.awt.headless=true}"
    version="$(ls "$ROOT"/interop/java/target/lib/kafka-tools-*.jar | head -1 | sed 's/.*kafka-tools-\(.*\)\.jar/\1/')"
    for heap in "$HEAP" -Xmx1G -Xmx4G; do
        # shellcheck disable=SC2086
        if best java "$JAVA_RUNS" "kafka-dump-log $version --deep-iteration ($heap)" \
            java $heap $PERF -cp "$JAVA_CP" org.apache.kafka.tools.DumpLogSegments \
            --deep-iteration --files "$FILE"; then
            IFS='|' read -r _ JAVA_WALL JAVA_CPU _ <<<"${ROWS[${#ROWS[@]} - 1]}"
            break
        fi
        if grep -q OutOfMemoryError "$WORK/java.err"; then
            JAVA_NOTE="${JAVA_NOTE}kafka-dump-log ran out of memory with $heap; "
            step "kafka-dump-log: OutOfMemoryError with $heap, retrying with more heap"
        else
            JAVA_NOTE="${JAVA_NOTE}kafka-dump-log failed with $heap (see above); "
            break
        fi
    done
fi

# The table.
echo
echo "segment: $mib MiB ($bytes bytes), $records records of 100 bytes in batches of 1000, compression $COMPRESSION, content $CONTENT"
echo "krec: $KREC ($("$KREC" --version)); best of $RUNS run(s); kafka-dump-log: $JAVA_RUNS run(s)"
echo
printf '%-50s %8s %8s %8s %13s %11s %10s\n' "tool" "wall s" "CPU s" "MiB/s" "peak RSS MiB" "ratio wall" "ratio CPU"
ratio() { awk -v j="$1" -v w="$2" 'BEGIN { if (j == "") print "-"; else if (w > 0) printf "%.1fx", j / w; else print "inf" }'; }
for row in "${ROWS[@]}"; do
    IFS='|' read -r label wall cpu rss <<<"$row"
    awk -v l="$label" -v w="$wall" -v c="$cpu" -v r="$rss" -v m="$bytes" \
        -v rw="$(ratio "$JAVA_WALL" "$wall")" -v rc="$(ratio "${JAVA_CPU:-}" "$cpu")" 'BEGIN {
        printf "%-50s %8.3f %8.2f %8.1f %13.1f %11s %10s\n", l, w, c, (w > 0 ? m / 1048576 / w : 0), r / 1024, rw, rc }'
done
echo "(MiB/s: segment size / wall time; CPU: user + system of all threads; ratio: kafka-dump-log"
echo " --deep-iteration's wall or CPU time / the tool's. Load average at the end: $(cut -d' ' -f1-3 /proc/loadavg) on $(nproc) CPUs.)"
[ -n "$JAVA_NOTE" ] && echo "note: $JAVA_NOTE"

IFS='|' read -r _ deep_wall _ deep_rss <<<"${ROWS[0]}"
if [ -n "$JAVA_WALL" ]; then
    verdict="$(awk -v j="$JAVA_WALL" -v w="$deep_wall" -v r="$deep_rss" 'BEGIN {
        fast = (w > 0 ? j / w : 1e9) >= 20; small = r / 1024 < 64
        printf "%s (%.1fx faster, peak %.1f MiB)", (fast && small ? "met" : "NOT met"), (w > 0 ? j / w : 0), r / 1024 }')"
    echo "goal (krec dump --deep >= 20x faster than kafka-dump-log --deep-iteration, peak RSS < 64 MiB): $verdict"
fi
