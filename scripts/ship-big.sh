#!/usr/bin/env bash
# Ships one large v2 segment of every codec into a local Kafka 4.4 broker with `krec ship` and
# checks, with Kafka's own code on both sides, that the target holds exactly the source's
# records: Kafka's Java consumer at read_committed over the target and Kafka's FileRecords
# reader over the source segment each hash every record (timestamp, key, value, headers, in
# order; interop/java RecordDigest) and the digests and counts must be equal. Then `krec dump`
# of the target partition directory must show every source batch shipped as is with a
# byte-equal records section (interop/broker/ship_check.py sections).
#
# Usage: bash scripts/ship-big.sh [--size MIB] [--codecs "none gzip snappy lz4 zstd"] [--dir DIR]
#                                 [--broker BROKER_DIR]
#
#   --size MIB     MiB of record values per codec (default 1024: one 1 GiB segment per codec)
#   --codecs LIST  codecs (default: all five)
#   --dir DIR      where the temporary directory goes (default ${TMPDIR:-/tmp})
#   --broker DIR   use the running broker that interop/broker/broker.sh started in DIR (its
#                  partition directories are read while it runs) instead of starting one
#
# Each segment comes from `krec gen --content text --value-size 100 --key-size 16 --headers 2
# --records-per-batch 1000`. Prints one PASS/FAIL line per check and "ship-big: N checks passed, N failed";
# exit 1 on a failure, 2 on a usage or setup error. The interop suite runs it with --size 4;
# the issue's 1 GiB run is this script's default (several minutes: generating, shipping,
# consuming and reading 1 GiB per codec).
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"

SIZE_MIB=1024
CODECS="none gzip snappy lz4 zstd"
BASE_DIR="${TMPDIR:-/tmp}"
BROKER_DIR=""
usage() { sed -n '10,17p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 2; }
while [ $# -gt 0 ]; do
    case "$1" in
        --size) SIZE_MIB="${2:-}"; shift 2 ;;
        --codecs) CODECS="${2:-}"; shift 2 ;;
        --dir) BASE_DIR="${2:-}"; shift 2 ;;
        --broker) BROKER_DIR="${2:-}"; shift 2 ;;
        *) usage ;;
    esac
done
[[ "$SIZE_MIB" =~ ^[0-9]+$ && "$SIZE_MIB" -gt 0 ]] || usage
CP="$ROOT/interop/java/target/lib/*:$ROOT/interop/java/target/classes"
ls interop/java/target/classes/dev/krecords/interop/RecordDigest.class >/dev/null 2>&1 \
    || { echo "ship-big: interop/java is not built (mvn -f interop/java/pom.xml package)" >&2; exit 2; }
if [ -z "${KREC:-}" ]; then
    cargo build --release -q -p krec
    KREC="$(cargo metadata --format-version 1 --no-deps | python3 -c 'import json,sys; print(json.load(sys.stdin)["target_directory"])')/release/krec"
fi

WORK="$(mktemp -d "$BASE_DIR/krecords-ship-big.XXXXXX")"
OWN_BROKER=0
cleanup() {
    [ "$OWN_BROKER" -eq 0 ] || interop/broker/broker.sh stop "$BROKER_DIR" >/dev/null 2>&1 || true
    rm -rf "$WORK"
}
trap cleanup EXIT
# Each record: 100-byte value, 16-byte key, two headers (about 150 bytes on the wire).
RECORDS=$((SIZE_MIB * 1048576 / 100))
if [ -n "$BROKER_DIR" ]; then
    BOOTSTRAP="$(cat "$BROKER_DIR/bootstrap" 2>/dev/null)" \
        || { echo "ship-big: no broker in $BROKER_DIR (no bootstrap file)" >&2; exit 2; }
else
    BROKER_DIR="$WORK/broker"
    OWN_BROKER=1
    BOOTSTRAP="$(interop/broker/broker.sh start "$BROKER_DIR")"
fi
echo "ship-big: broker on $BOOTSTRAP; $RECORDS records per codec ($SIZE_MIB MiB of values); $(nproc) CPUs: $(lscpu | sed -n 's/^Model name: *//p')"

passed=0
failed=0
result() {
    if [ "$1" = PASS ]; then passed=$((passed + 1)); else failed=$((failed + 1)); fi
    echo "$1 ship-big/$2: $3"
}

declare -A AS_IS
for codec in $CODECS; do
    src="$WORK/src-$codec/big-0"
    mkdir -p "$src"
    t0=$SECONDS
    "$KREC" gen --records "$RECORDS" --value-size 100 --key-size 16 --headers 2 --records-per-batch 1000 \
        --content text --compression "$codec" -o "$src/00000000000000000000.log" >/dev/null
    size=$(stat -c %s "$src/00000000000000000000.log")
    java -cp "$CP" org.apache.kafka.tools.TopicCommand --bootstrap-server "$BOOTSTRAP" --create \
        --topic "big-$codec" --partitions 1 --replication-factor 1 --config retention.ms=-1 \
        --config max.message.bytes=8388608 >/dev/null
    t1=$SECONDS
    if ! "$KREC" ship "$src" "kafka://$BOOTSTRAP/big-$codec/0" --format json >"$WORK/$codec.json" 2>"$WORK/$codec.err"; then
        result FAIL "$codec" "krec ship failed: $(tail -n 3 "$WORK/$codec.err")"
        continue
    fi
    t2=$SECONDS
    AS_IS[$codec]="$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["partitions"][0]["batches_as_is"])' "$WORK/$codec.json")"
    java -Xmx512m -cp "$CP" dev.krecords.interop.RecordDigest files "$src/00000000000000000000.log" >"$WORK/$codec-source.json"
    java -Xmx512m -cp "$CP" dev.krecords.interop.RecordDigest consume "$BOOTSTRAP" "big-$codec" 0 >"$WORK/$codec-target.json"
    src_digest="$(cat "$WORK/$codec-source.json")"
    if [ "$src_digest" = "$(cat "$WORK/$codec-target.json")" ] && grep -q "\"records\": $RECORDS," "$WORK/$codec-source.json"; then
        result PASS "$codec" "$((size >> 20)) MiB segment, $RECORDS records, ${AS_IS[$codec]} batches shipped as is in $((t2 - t1)) s (generated in $((t1 - t0)) s); Kafka's consumer at read_committed and Kafka's FileRecords reader agree: $src_digest"
    else
        result FAIL "$codec" "source $(cat "$WORK/$codec-source.json"), target $(cat "$WORK/$codec-target.json")"
    fi
done

for codec in $CODECS; do
    [ -n "${AS_IS[$codec]:-}" ] || continue
    "$KREC" dump --format json "$WORK/src-$codec/big-0" >"$WORK/$codec-source-dump.jsonl"
    "$KREC" dump --format json "$BROKER_DIR/logs/big-$codec-0" >"$WORK/$codec-target-dump.jsonl"
    line="$(python3 interop/broker/ship_check.py sections "$WORK/$codec-source-dump.jsonl" \
        "$WORK/$codec-target-dump.jsonl" "${AS_IS[$codec]}" "name=ship-big/$codec-sections")"
    echo "$line"
    case "$line" in PASS*) passed=$((passed + 1)) ;; *) failed=$((failed + 1)) ;; esac
done
echo "ship-big: $passed checks passed, $failed failed"
[ "$failed" -eq 0 ]
