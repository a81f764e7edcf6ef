#!/usr/bin/env bash
# Benchmarks `krec ship` against `kcat -P` and Kafka's kafka-producer-perf-test, into one local
# Kafka 4.4 broker, in one run.
#
# Usage: bash scripts/bench-ship.sh [--size MIB] [--codecs "none lz4"] [--batch N] [--runs N]
#                                   [--partitions "1 4"] [--dir DIR] [--keep]
#
#   --size MIB      MiB of 100-byte record values per codec (default 1024: 1 GiB, 10.7M records)
#   --codecs LIST   codecs to measure (default "none lz4")
#   --batch N       records per batch of the generated source segments (default 1000)
#   --runs N        measured runs of each tool, each into a new topic, the fastest reported
#                   (default 2; one unmeasured warm-up run of each tool comes first: the
#                   broker's JIT)
#   --partitions L  topic layouts (default "1 4"): the same records in one partition, or split
#                   evenly over P partitions (krec ship: P source partitions in one job; kcat and
#                   the perf test: a topic of P partitions, their partitioners spreading them)
#   --dir DIR       where the temporary directory goes (default ${TMPDIR:-/tmp})
#   --keep          keep the temporary directory (its path is printed)
#
# Steps: builds krec in release mode (or uses $KREC); starts a broker with interop/broker/broker.sh
# (Kafka's jars from interop/java/target/lib: run `mvn -f interop/java/pom.xml package` once);
# per codec generates one v2 segment with `krec gen --content text --value-size 100` (no keys,
# --batch records per batch, the codec's compression), and a file of the same values, one a line,
# from `krec dump --print-data`. Then, each into its own new topic, measured with GNU time (wall
# clock, CPU, peak RSS) and the broker's CPU time over the run (from /proc; written data is synced
# before each run and the topic deleted after it, so page-cache writeback of one run does not
# land in the next):
#
#   krec ship DIR-0 … kafka://BROKER/ship-C                transactions of 64 MiB (the default),
#                                                          the segments' batches sent as they are,
#                                                          up to 4 partitions at once (the default)
#   kcat -P -b BROKER -t kcat-C [-p 0] -z C -l VALUES      librdkafka's defaults (acks=all,
#                                                          idempotence off, linger.ms 5, batches of
#                                                          up to 1 MB), the same values
#   kafka-producer-perf-test --num-records N --record-size 100 --throughput -1
#       --producer-props acks=all compression.type=C       Kafka's defaults (batch.size 16384,
#                                                          linger.ms 5); its payloads are its own
#                                                          random letters of the same size (a
#                                                          --payload-file of 10M lines would not
#                                                          fit its heap)
#
# Prints a table (the fastest run of each): tool, codec, partitions, wall s, CPU s of the tool,
# CPU s of the broker, MB/s of values (value bytes / wall), peak RSS MiB, the ratio
# krec ship / kcat per codec and layout, and whether the issue's goal (at least 2x kcat's MB/s)
# holds. The broker shares the machine: on a busy machine wall times include waiting for a CPU
# (the load average is printed). Exit 0 either way (a measurement); 2 on a usage or setup error.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"

SIZE_MIB=1024
CODECS="none lz4"
BATCH=1000
RUNS=2
LAYOUTS="1 4"
BASE_DIR="${TMPDIR:-/tmp}"
KEEP=0
usage() { sed -n '5,18p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 2; }
while [ $# -gt 0 ]; do
    case "$1" in
        --size) SIZE_MIB="${2:-}"; shift 2 ;;
        --codecs) CODECS="${2:-}"; shift 2 ;;
        --batch) BATCH="${2:-}"; shift 2 ;;
        --runs) RUNS="${2:-}"; shift 2 ;;
        --partitions) LAYOUTS="${2:-}"; shift 2 ;;
        --dir) BASE_DIR="${2:-}"; shift 2 ;;
        --keep) KEEP=1; shift ;;
        *) usage ;;
    esac
done
[[ "$SIZE_MIB" =~ ^[0-9]+$ && "$SIZE_MIB" -gt 0 ]] || usage
command -v kcat >/dev/null || { echo "bench-ship: kcat not found (apt-get install kcat)" >&2; exit 2; }
command -v java >/dev/null || { echo "bench-ship: java not found" >&2; exit 2; }
[ -x /usr/bin/time ] || { echo "bench-ship: GNU time (/usr/bin/time) not found" >&2; exit 2; }
CP="$ROOT/interop/java/target/lib/*"
ls interop/java/target/lib/kafka-tools-*.jar >/dev/null 2>&1 \
    || { echo "bench-ship: no Kafka jars in interop/java/target/lib (mvn -f interop/java/pom.xml package)" >&2; exit 2; }
if [ -z "${KREC:-}" ]; then
    cargo build --release -q -p krec
    KREC="$(cargo metadata --format-version 1 --no-deps | python3 -c 'import json,sys; print(json.load(sys.stdin)["target_directory"])')/release/krec"
fi

WORK="$(mktemp -d "$BASE_DIR/krecords-bench-ship.XXXXXX")"
cleanup() {
    interop/broker/broker.sh stop "$WORK/broker" >/dev/null 2>&1 || true
    if [ "$KEEP" -eq 1 ]; then echo "kept: $WORK"; else rm -rf "$WORK"; fi
}
trap cleanup EXIT
RECORDS=$((SIZE_MIB * 1048576 / 100))
BOOTSTRAP="$(interop/broker/broker.sh start "$WORK/broker")"
echo "broker on $BOOTSTRAP; $RECORDS records of 100 bytes per codec; $(nproc) CPUs: $(lscpu | sed -n 's/^Model name: *//p')"

create_topic() {
    java -cp "$CP" org.apache.kafka.tools.TopicCommand --bootstrap-server "$BOOTSTRAP" --create \
        --topic "$1" --partitions "$2" --replication-factor 1 --config retention.ms=-1 >/dev/null
}
delete_topic() {
    java -cp "$CP" org.apache.kafka.tools.TopicCommand --bootstrap-server "$BOOTSTRAP" --delete \
        --topic "$1" >/dev/null 2>&1 || true
}
broker_cpu() { awk '{print $14 + $15}' "/proc/$(cat "$WORK/broker/broker.pid")/stat"; }
HZ="$(getconf CLK_TCK)"

# measure NAME CODEC PARTS RECORD CMD...: runs CMD under GNU time; with RECORD=1 appends
# "NAME CODEC PARTS wall cpu broker_cpu rss" to RESULTS (RECORD=0: a warm-up run).
RESULTS="$WORK/results.txt"
measure() {
    local name="$1" codec="$2" parts="$3" record="$4" b0 b1
    shift 4
    sync
    b0="$(broker_cpu)"
    /usr/bin/time -f "%e %U %S %M" -o "$WORK/time.txt" "$@" >"$WORK/$name-$codec.out" 2>"$WORK/$name-$codec.err" || {
        echo "bench-ship: $name ($codec, $parts partitions) failed:" >&2
        tail -n 5 "$WORK/$name-$codec.err" >&2
        return 0
    }
    b1="$(broker_cpu)"
    read -r wall user sys rss <"$WORK/time.txt"
    if [ "$record" -eq 1 ]; then
        echo "$name $codec $parts $wall $(python3 -c "print(round($user + $sys, 2))") $(python3 -c "print(round(($b1 - $b0) / $HZ, 2))") $((rss / 1024))" >>"$RESULTS"
        echo "  $name ($codec, $parts partitions): ${wall}s"
    else
        echo "  $name ($codec, $parts partitions): ${wall}s (warm-up)"
    fi
}

for codec in $CODECS; do
    for parts in $LAYOUTS; do
        src="$WORK/src-$codec-$parts"
        dirs=()
        for ((p = 0; p < parts; p++)); do
            mkdir -p "$src/bench-$p"
            # The records split evenly, the first partitions taking the remainder.
            n=$((RECORDS / parts + (p < RECORDS % parts ? 1 : 0)))
            "$KREC" gen --records "$n" --value-size 100 --records-per-batch "$BATCH" --content text \
                --compression "$codec" -o "$src/bench-$p/00000000000000000000.log" >/dev/null
            dirs+=("$src/bench-$p")
        done
        if [ ! -f "$WORK/values.txt" ]; then
            # The same values for kcat, one a line (from a one-partition layout: all of them).
            "$KREC" gen --records "$RECORDS" --value-size 100 --records-per-batch "$BATCH" --content text \
                -o "$WORK/values.log" >/dev/null
            "$KREC" dump --print-data "$WORK/values.log" | sed -n 's/^| .* payload: //p' >"$WORK/values.txt"
            rm -f "$WORK/values.log"
        fi
        # Both inputs from the page cache.
        cat "$src"/bench-*/*.log "$WORK/values.txt" >/dev/null
        echo "$codec, $parts partitions: segments $(du -cm "$src"/bench-*/*.log | tail -n 1 | cut -f1) MiB, load average $(cut -d' ' -f1-3 /proc/loadavg)"
        pin=()
        [ "$parts" -eq 1 ] && pin=(-p 0)
        for ((run = 0; run <= RUNS; run++)); do
            record=$((run > 0 ? 1 : 0))
            for t in ship kcat perf; do create_topic "$t-$codec-$parts-$run" "$parts"; done
            measure krec-ship "$codec" "$parts" "$record" "$KREC" ship "${dirs[@]}" \
                "kafka://$BOOTSTRAP/ship-$codec-$parts-$run" --format json
            delete_topic "ship-$codec-$parts-$run"
            measure kcat-P "$codec" "$parts" "$record" kcat -P -b "$BOOTSTRAP" -t "kcat-$codec-$parts-$run" \
                "${pin[@]}" -z "$codec" -l "$WORK/values.txt"
            delete_topic "kcat-$codec-$parts-$run"
            measure producer-perf-test "$codec" "$parts" "$record" java -Xmx1G -cp "$CP" \
                org.apache.kafka.tools.ProducerPerformance --topic "perf-$codec-$parts-$run" \
                --num-records "$RECORDS" --record-size 100 --throughput -1 \
                --producer-props "bootstrap.servers=$BOOTSTRAP" acks=all "compression.type=$codec"
            delete_topic "perf-$codec-$parts-$run"
        done
        rm -rf "$src"
    done
done

python3 - "$RESULTS" "$RECORDS" <<'EOF'
import sys
rows = [l.split() for l in open(sys.argv[1]) if l.strip()]
value_mb = int(sys.argv[2]) * 100 / 1e6
tools = ["krec-ship", "kcat-P", "producer-perf-test"]
best = {}
for name, codec, parts, wall, cpu, bcpu, rss in rows:
    k = (name, codec, int(parts))
    if k not in best or float(wall) < float(best[k][3]):
        best[k] = (name, codec, parts, wall, cpu, bcpu, rss)
print()
print(f"{'tool':<20} {'codec':<6} {'parts':>5} {'wall s':>8} {'CPU s':>7} {'broker CPU s':>12} {'MB/s':>8} {'RSS MiB':>8}")
rate = {}
for k in sorted(best, key=lambda k: (k[1], k[2], tools.index(k[0]))):
    name, codec, parts, wall, cpu, bcpu, rss = best[k]
    r = value_mb / max(float(wall), 1e-9)
    rate[k] = r
    print(f"{name:<20} {codec:<6} {parts:>5} {float(wall):>8.2f} {float(cpu):>7.2f} {float(bcpu):>12.2f} {r:>8.1f} {int(rss):>8}")
print()
for codec, parts in sorted({(k[1], k[2]) for k in best}):
    s, k = rate.get(("krec-ship", codec, parts)), rate.get(("kcat-P", codec, parts))
    if s and k:
        verdict = "holds" if s >= 2 * k else "does not hold"
        print(f"{codec}, {parts} partition(s): krec ship / kcat -P = {s / k:.2f}x (goal: at least 2x: {verdict})")
EOF
