#!/usr/bin/env bash
# Benchmarks `krec ship` against `kcat -P` and Kafka's kafka-producer-perf-test, into one local
# Kafka 4.4 broker, in one run.
#
# Usage: bash scripts/bench-ship.sh [--size MIB] [--codecs "none lz4"] [--batch N] [--runs N]
#                                   [--dir DIR] [--keep]
#
#   --size MIB      MiB of 100-byte record values per codec (default 1024: 1 GiB, 10.7M records)
#   --codecs LIST   codecs to measure (default "none lz4")
#   --batch N       records per batch of the generated source segment (default 1000)
#   --runs N        runs of each tool, each into a new topic, the fastest reported (default 2: the
#                   broker's JIT warms up during the first)
#   --dir DIR       where the temporary directory goes (default ${TMPDIR:-/tmp})
#   --keep          keep the temporary directory (its path is printed)
#
# Steps: builds krec in release mode (or uses $KREC); starts a broker with interop/broker/broker.sh
# (Kafka's jars from interop/java/target/lib: run `mvn -f interop/java/pom.xml package` once);
# per codec generates one v2 segment with `krec gen --content text --value-size 100` (no keys,
# --batch records per batch, the codec's compression), and a file of the same values, one a line,
# from `krec dump --print-data`. Then, each into its own new single-partition topic, measured with
# GNU time (wall clock, CPU, peak RSS):
#
#   krec ship SEGMENT kafka://BROKER/ship-C/0               transactions of 64 MiB (the default),
#                                                          the segment's batches sent as they are
#   kcat -P -b BROKER -t kcat-C -p 0 -z C -l VALUES        librdkafka's defaults (acks=all,
#                                                          idempotence off, linger.ms 5, batches of
#                                                          up to 1 MB), the same values
#   kafka-producer-perf-test --num-records N --record-size 100 --throughput -1
#       --producer-props acks=all compression.type=C       Kafka's defaults (batch.size 16384,
#                                                          linger.ms 5); its payloads are its own
#                                                          random letters of the same size (a
#                                                          --payload-file of 10M lines would not
#                                                          fit its heap)
#
# Prints a table (the fastest run of each): tool, codec, wall s, CPU s, MB/s of values (value
# bytes / wall), peak RSS MiB,
# the ratio krec ship / kcat, and whether the issue's goal (at least 2x kcat's MB/s) holds. The
# broker shares the machine: on a busy machine wall times include waiting for a CPU (the load
# average is printed). Exit 0 either way (a measurement); 2 on a usage or setup error.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"

SIZE_MIB=1024
CODECS="none lz4"
BATCH=1000
RUNS=2
BASE_DIR="${TMPDIR:-/tmp}"
KEEP=0
usage() { sed -n '5,12p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 2; }
while [ $# -gt 0 ]; do
    case "$1" in
        --size) SIZE_MIB="${2:-}"; shift 2 ;;
        --codecs) CODECS="${2:-}"; shift 2 ;;
        --batch) BATCH="${2:-}"; shift 2 ;;
        --runs) RUNS="${2:-}"; shift 2 ;;
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
        --topic "$1" --partitions 1 --replication-factor 1 --config retention.ms=-1 >/dev/null
}

# measure NAME CODEC CMD...: runs CMD under GNU time, appends "NAME CODEC wall cpu rss" to RESULTS.
RESULTS="$WORK/results.txt"
measure() {
    local name="$1" codec="$2"
    shift 2
    /usr/bin/time -f "%e %U %S %M" -o "$WORK/time.txt" "$@" >"$WORK/$name-$codec.out" 2>"$WORK/$name-$codec.err" || {
        echo "bench-ship: $name ($codec) failed:" >&2
        tail -n 5 "$WORK/$name-$codec.err" >&2
        return 0
    }
    read -r wall user sys rss <"$WORK/time.txt"
    echo "$name $codec $wall $(python3 -c "print(round($user + $sys, 2))") $((rss / 1024))" >>"$RESULTS"
    echo "  $name ($codec): ${wall}s"
}

for codec in $CODECS; do
    src="$WORK/src-$codec/bench-0"
    mkdir -p "$src"
    "$KREC" gen --records "$RECORDS" --value-size 100 --records-per-batch "$BATCH" --content text \
        --compression "$codec" -o "$src/00000000000000000000.log" >/dev/null
    if [ ! -f "$WORK/values.txt" ]; then
        "$KREC" dump --print-data "$src/00000000000000000000.log" | sed -n 's/^| .* payload: //p' >"$WORK/values.txt"
    fi
    # Both inputs from the page cache.
    cat "$src/00000000000000000000.log" "$WORK/values.txt" >/dev/null
    echo "$codec: segment $(du -m "$src/00000000000000000000.log" | cut -f1) MiB, load average $(cut -d' ' -f1-3 /proc/loadavg)"
    for ((run = 1; run <= RUNS; run++)); do
        for t in ship kcat perf; do create_topic "$t-$codec-$run"; done
        measure "krec-ship" "$codec" "$KREC" ship "$src" "kafka://$BOOTSTRAP/ship-$codec-$run/0" --format json
        measure "kcat-P" "$codec" kcat -P -b "$BOOTSTRAP" -t "kcat-$codec-$run" -p 0 -z "$codec" -l "$WORK/values.txt"
        measure "producer-perf-test" "$codec" java -Xmx1G -cp "$CP" org.apache.kafka.tools.ProducerPerformance \
            --topic "perf-$codec-$run" --num-records "$RECORDS" --record-size 100 --throughput -1 \
            --producer-props "bootstrap.servers=$BOOTSTRAP" acks=all "compression.type=$codec"
    done
    rm -rf "$WORK/src-$codec"
done

python3 - "$RESULTS" "$RECORDS" <<'EOF'
import sys
rows = [l.split() for l in open(sys.argv[1]) if l.strip()]
value_mb = int(sys.argv[2]) * 100 / 1e6
print()
print(f"{'tool':<20} {'codec':<6} {'wall s':>8} {'CPU s':>8} {'MB/s':>8} {'RSS MiB':>8}")
rate = {}
best = {}
for name, codec, wall, cpu, rss in rows:
    if (name, codec) not in best or float(wall) < float(best[(name, codec)][2]):
        best[(name, codec)] = (name, codec, wall, cpu, rss)
rows = [best[k] for k in sorted(best, key=lambda k: (k[1], ["krec-ship", "kcat-P", "producer-perf-test"].index(k[0])))]
for name, codec, wall, cpu, rss in rows:
    r = value_mb / max(float(wall), 1e-9)
    rate[(name, codec)] = r
    print(f"{name:<20} {codec:<6} {float(wall):>8.1f} {float(cpu):>8.1f} {r:>8.1f} {int(rss):>8}")
print()
for codec in sorted({c for _, c, *_ in rows}):
    s, k = rate.get(("krec-ship", codec)), rate.get(("kcat-P", codec))
    if s and k:
        verdict = "holds" if s >= 2 * k else "does not hold"
        print(f"{codec}: krec ship / kcat -P = {s / k:.2f}x (goal: at least 2x: {verdict})")
EOF
