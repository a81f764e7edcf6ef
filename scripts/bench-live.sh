#!/usr/bin/env bash
# Benchmarks reading a live topic (issue 15): one partition on a local Kafka 4.4 broker read by
# krec and by its peers in one run. A measurement, not a test.
#
# Usage: bash scripts/bench-live.sh [--size MIB] [--compression C] [--runs N] [--dir DIR]
#
#   --size MIB        bytes produced into the topic, in MiB (default 1024 = 1 GiB)
#   --compression C   the producer's compression.type: none (default), gzip, snappy, lz4, zstd
#   --runs N          runs of each reader; the best is reported (default 2)
#   --dir DIR         where the broker's directory goes (default ${TMPDIR:-/tmp})
#
# Steps: builds krec and the krecords-client example fetch_rate in release mode; starts a broker
# with interop/broker/broker.sh (Kafka's jars from `mvn package` of interop/java); creates topic
# "bench" (1 partition) and fills it with Kafka's own ProducerPerformance (100-byte records,
# batch.size 1 MiB, linger.ms 50). Then each reader, under GNU time, reads the partition from
# the earliest offset to the high watermark with its output to /dev/null:
#
#   fetch          crates/client/examples/fetch_rate.rs: raw Fetch, bytes discarded (the ceiling)
#   krec-stats     krec stats kafka://…/bench/0
#   krec-json      krec dump --deep --format json kafka://…/bench/0   (one JSON line per record)
#   kcat-json      kcat -C -e -J -o beginning -t bench -p 0             (Debian's kcat; one JSON line per record)
#   console        kafka-console-consumer (org.apache.kafka.tools.consumer.ConsoleConsumer)
#                  --from-beginning --max-messages N (JVM start included)
#
# MB/s are the partition's stored bytes (its .log files) over wall seconds. Prints the CPU model,
# the load average, a table and the ratios (krec-json / kcat-json, target >= 3; krec-stats /
# fetch, target >= 0.9). Needs kcat (apt-get install kcat) and GNU time; exit 2 without them.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"

SIZE_MIB=1024
COMPRESSION=none
RUNS=2
BASE_DIR="${TMPDIR:-/tmp}"
usage() { sed -n '5,10p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 2; }
while [ $# -gt 0 ]; do
    case "$1" in
        --size) SIZE_MIB="${2:-}"; shift 2 ;;
        --compression) COMPRESSION="${2:-}"; shift 2 ;;
        --runs) RUNS="${2:-}"; shift 2 ;;
        --dir) BASE_DIR="${2:-}"; shift 2 ;;
        -h | --help) usage ;;
        *) echo "bench-live: unknown argument $1" >&2; usage ;;
    esac
done
for n in "$SIZE_MIB" "$RUNS"; do
    case "$n" in '' | *[!0-9]*) echo "bench-live: not a number: '$n'" >&2; exit 2 ;; esac
done
step() { printf '==> %s\n' "$*" >&2; }
command -v kcat >/dev/null || { echo "bench-live: kcat is needed (apt-get install kcat)" >&2; exit 2; }
TIME=/usr/bin/time
"$TIME" -v true >/dev/null 2>&1 || { echo "bench-live: GNU time is needed at /usr/bin/time" >&2; exit 2; }

step "cargo build --release -p krec; the fetch_rate example"
cargo build --release -q -p krec -p krecords-client --example fetch_rate
target="$(cargo metadata --format-version 1 --no-deps \
    | python3 -c 'import json, sys; print(json.load(sys.stdin)["target_directory"])')"
KREC="${KREC:-$target/release/krec}"
FETCH="$target/release/examples/fetch_rate"
if [ ! -d interop/java/target/lib ]; then
    step "mvn package (Kafka's jars)"
    mvn -q -B -f interop/java/pom.xml package -DskipTests
fi
CP="$ROOT/interop/java/target/lib/*"

WORK="$(mktemp -d "$BASE_DIR/krec-bench-live.XXXXXX")"
trap 'interop/broker/broker.sh stop "$WORK/broker" >/dev/null 2>&1 || true; rm -rf "$WORK"' EXIT
step "starting a broker in $WORK/broker"
BOOT="$(BROKER_HEAP=2g interop/broker/broker.sh start "$WORK/broker")"
java -cp "$CP" org.apache.kafka.tools.TopicCommand --bootstrap-server "$BOOT" --create --topic bench \
    --partitions 1 --config segment.bytes=1073741824 >/dev/null
records=$((SIZE_MIB * 1048576 / 100))
step "producing $records records of 100 bytes (compression $COMPRESSION) with ProducerPerformance"
java -Xmx1g -cp "$CP" org.apache.kafka.tools.ProducerPerformance --topic bench --num-records "$records" \
    --record-size 100 --throughput -1 --producer-props "bootstrap.servers=$BOOT" acks=1 \
    batch.size=1048576 linger.ms=50 buffer.memory=268435456 "compression.type=$COMPRESSION" \
    | tail -n 1 >&2
bytes="$(cat "$WORK"/broker/logs/bench-0/*.log | wc -c)"
cat "$WORK"/broker/logs/bench-0/*.log >/dev/null
URL="kafka://$BOOT/bench/0"

# measure NAME CMD...: the best "wall_seconds peak_rss_kib" of $RUNS runs.
measure() {
    local name="$1" best="" i
    shift
    for i in $(seq "$RUNS"); do
        "$TIME" -f '%e %M' -o "$WORK/$name.time" "$@" >/dev/null 2>"$WORK/$name.err" || {
            echo "bench-live: $name failed:" >&2; tail -5 "$WORK/$name.err" >&2; exit 2; }
        local t
        t="$(tail -n 1 "$WORK/$name.time")"
        if [ -z "$best" ] || awk -v a="${t% *}" -v b="${best% *}" 'BEGIN { exit !(a < b) }'; then best="$t"; fi
    done
    echo "$best"
}

load_before="$(cut -d' ' -f1-3 /proc/loadavg)"
cpu_model="$(lscpu | sed -n 's/^Model name: *//p' | head -1)"
declare -A WALL RSS
for name in fetch krec-stats krec-json kcat-json console; do
    case "$name" in
        fetch) cmd=("$FETCH" "$BOOT" bench 0) ;;
        krec-stats) cmd=("$KREC" stats "$URL") ;;
        krec-json) cmd=("$KREC" dump --deep --format json "$URL") ;;
        kcat-json) cmd=(kcat -C -b "$BOOT" -t bench -p 0 -o beginning -e -J -q) ;;
        console) cmd=(java -Xmx1g -cp "$CP" org.apache.kafka.tools.consumer.ConsoleConsumer
                      --bootstrap-server "$BOOT" --topic bench --partition 0 --offset earliest
                      --max-messages "$records" --timeout-ms 30000) ;;
    esac
    step "$name: ${cmd[*]}"
    read -r w r < <(measure "$name" "${cmd[@]}")
    WALL[$name]="$w"
    RSS[$name]="$r"
    step "  $w s, peak RSS $((r / 1024)) MiB"
done

echo
echo "CPU: ${cpu_model:-unknown} ($(nproc) cores); load average before: $load_before, after: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "topic: 1 partition, $records records of 100 bytes, compression $COMPRESSION, $((bytes / 1048576)) MiB stored; best of $RUNS runs"
printf '%-12s %9s %9s %12s\n' reader seconds MB/s "peak RSS MiB"
for name in fetch krec-stats krec-json kcat-json console; do
    awk -v n="$name" -v w="${WALL[$name]}" -v b="$bytes" -v r="${RSS[$name]}" \
        'BEGIN { printf "%-12s %9.2f %9.1f %12d\n", n, w, b / w / 1e6, r / 1024 }'
done
awk -v j="${WALL[krec-json]}" -v k="${WALL[kcat-json]}" -v s="${WALL[krec-stats]}" -v f="${WALL[fetch]}" -v c="${WALL[console]}" 'BEGIN {
    printf "krec dump --deep --format json vs kcat -J: %.2fx (target >= 3)\n", k / j
    printf "krec dump --deep --format json vs kafka-console-consumer: %.2fx\n", c / j
    printf "krec stats vs raw Fetch: %.0f%% of its rate (target >= 90%%)\n", 100 * f / s
}'
