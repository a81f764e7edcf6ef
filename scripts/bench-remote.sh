#!/usr/bin/env bash
# Benchmark (not a test): reading 1 GiB of remote-only history of a tiered Kafka 4.4 topic from a
# local S3 server (moto), by `krec dump --format json`, by `krec verify --remote`, and by Kafka's
# own remote fetch (the Java consumer from the beginning through the tiered broker), side by side.
#
# Usage: bash scripts/bench-remote.sh [DIR]   (default: /tmp/krecords-bench-remote; the broker's
# data removed after unless BENCH_KEEP=1). Run it on a quiet machine: under
# `flock -x /tmp/bench.lock`, or with BENCH_LOCK=/tmp/bench.lock to hold it only while timing.
# KREC=PATH uses that krec (default: `cargo build --release -p krec` first).
#
# Setup, as the interop suite's step_tiered does (interop/run.sh, interop/broker/tiered_check.py):
# the broker (interop/broker/broker.sh, jars of interop/java: `mvn -f interop/java/pom.xml
# package`), Aiven's plugin built from third_party/ (`mvn -f interop/tiered/pom.xml package`), its
# S3 backend against `moto_server` (interop/.venv's, else a venv made in DIR with the moto pin of
# interop/py/requirements.txt). The topic: 1 partition, 32 MiB segments, local.retention.bytes=1,
# no producer compression; the plugin: 4 MiB chunks, chunk compression and encryption off
# (BENCH_COMPRESSION=on / BENCH_ENCRYPTION=on turn them on), the interop suite's 64 MiB chunk
# cache for the broker's remote fetches.
#
# Data: BENCH_BYTES (default 1 GiB) of BENCH_RECORD_SIZE-byte values (default 1024, the record size
# of the interop suite's tiered runs) written by Kafka's ProducerPerformance; then a roll (one more
# record after segment.ms) so that every one of them is in a closed segment, and the wait until every
# closed segment is uploaded and deleted locally: those records are then in the remote tier only.
#
# Timed, in this order, BENCH_ROUNDS times each (default 3; the median is printed), with
# /usr/bin/time for the peak RSS, all output discarded:
#   dump       krec dump --format json s3://BUCKET/PREFIX (the remote tier only);
#   verify     krec verify --remote s3://BUCKET/PREFIX --remote-metadata LOGS/__remote_log_metadata-0;
#   verify-1   the same with --threads 1 under `taskset -c 0`;
#   dump-1cpu  krec dump as above under `taskset -c 0`;
#   kafka      Kafka's ConsumerPerformance from the beginning for exactly the remote records
#              (through the broker, hence through the plugin and moto).
#   local-*    dump, dump-1cpu, verify, verify-1 again on a copy of the tier in DIR/runs/local read
#              as file:///ROOT/PREFIX (no S3 server on the cores; BENCH_LOCAL=0 leaves them out).
# Each run also records the reader's CPU time and moto_server's CPU time during it: moto runs on
# the same cores, so the "both cores" runs share them with it. The summary prints the most a
# second core could give each reader, (one core's time) / max((reader CPU + moto CPU) / cores,
# moto CPU), next to the 1.8x target.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
ROOT="$(pwd)"
DIR="${1:-/tmp/krecords-bench-remote}"
ROUNDS="${BENCH_ROUNDS:-3}"
BYTES="${BENCH_BYTES:-1073741824}"
RECORD_SIZE="${BENCH_RECORD_SIZE:-1024}"
COMPRESSION="${BENCH_COMPRESSION:-off}"
ENCRYPTION="${BENCH_ENCRYPTION:-off}"
TOPIC=bench-remote
JAVA_CP="$ROOT/interop/java/target/lib/*:$ROOT/interop/java/target/classes"
PLUGIN="$ROOT/interop/tiered/target/plugin"

die() { echo "bench-remote: $*" >&2; exit 1; }
[ -d "$ROOT/interop/java/target/lib" ] || die "interop/java is not built: mvn -f interop/java/pom.xml package -DskipTests"
[ -d "$PLUGIN" ] || die "the plugin is not built: mvn -f interop/tiered/pom.xml package"
command -v taskset >/dev/null || die "taskset not found"
[ -x /usr/bin/time ] || die "/usr/bin/time not found"

if [ -z "${KREC:-}" ]; then
    cargo build -q --release -p krec
    KREC="$(cargo metadata --format-version 1 --no-deps | python3 -c 'import json,sys; print(json.load(sys.stdin)["target_directory"])')/release/krec"
fi

mkdir -p "$DIR"
DIR="$(cd "$DIR" && pwd)"
BROKER="$DIR/broker"
MOTO_PID=""
cleanup() {
    if [ -f "$BROKER/broker.pid" ]; then bash interop/broker/broker.sh stop "$BROKER" >/dev/null 2>&1 || true; fi
    if [ -n "$MOTO_PID" ]; then kill "$MOTO_PID" 2>/dev/null || true; wait "$MOTO_PID" 2>/dev/null || true; fi
    if [ "${BENCH_KEEP:-0}" != 1 ]; then rm -rf "$BROKER" "$DIR/runs" "$DIR/keys"; fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# -- moto
PY="$ROOT/interop/.venv/bin/python"
if [ ! -x "$ROOT/interop/.venv/bin/moto_server" ]; then
    PY="$DIR/venv/bin/python"
    if [ ! -x "$DIR/venv/bin/moto_server" ]; then
        echo "== installing $(grep '^moto' interop/py/requirements.txt) into $DIR/venv"
        python3 -m venv "$DIR/venv"
        "$DIR/venv/bin/pip" install -q --disable-pip-version-check "$(grep '^moto' interop/py/requirements.txt)"
    fi
fi
PORT="$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')"
ENDPOINT="http://127.0.0.1:$PORT"
"$(dirname "$PY")/moto_server" -H 127.0.0.1 -p "$PORT" >"$DIR/moto.log" 2>&1 &
MOTO_PID=$!
for _ in $(seq 100); do
    python3 -c "import socket,sys; socket.create_connection(('127.0.0.1', $PORT), timeout=1)" 2>/dev/null && break
    sleep 0.2
done
BUCKET=krecords-bench
PREFIX=tiered/
"$PY" -c "import boto3; boto3.client('s3', endpoint_url='$ENDPOINT', region_name='us-east-1', aws_access_key_id='krec', aws_secret_access_key='krec-secret').create_bucket(Bucket='$BUCKET')"

# -- broker with tiered storage (the interop suite's properties, S3 backend)
mkdir -p "$DIR/keys"
KEY_OPTS=()
if [ "$ENCRYPTION" = on ]; then
    openssl genpkey -algorithm RSA -pkeyopt rsa_keygen_bits:2048 -out "$DIR/keys/k1-private.pem" 2>/dev/null
    openssl pkey -in "$DIR/keys/k1-private.pem" -pubout -out "$DIR/keys/k1-public.pem"
    KEY_OPTS=(--rsm-private-key "k1=$DIR/keys/k1-private.pem")
fi
PROPS="$(python3 - "$PLUGIN" "$ENDPOINT" "$BUCKET" "$PREFIX" "$COMPRESSION" "$ENCRYPTION" "$DIR/keys" <<'EOF'
import sys
sys.path.insert(0, "interop/broker")
import tiered_check
plugin, endpoint, bucket, prefix, compression, encryption, keys = sys.argv[1:]
props = tiered_check.tiering_props(plugin)
props.update({
    "rsm.config.chunk.size": str(4 << 20),
    "rsm.config.fetch.chunk.cache.class": "io.aiven.kafka.tieredstorage.fetch.cache.MemoryChunkCache",
    "rsm.config.fetch.chunk.cache.size": str(64 << 20),
    "rsm.config.key.prefix": prefix,
    "rsm.config.compression.enabled": "true" if compression == "on" else "false",
    "rsm.config.encryption.enabled": "true" if encryption == "on" else "false",
    "rsm.config.storage.backend.class": "io.aiven.kafka.tieredstorage.storage.s3.S3Storage",
    "rsm.config.storage.s3.endpoint.url": endpoint,
    "rsm.config.storage.s3.bucket.name": bucket,
    "rsm.config.storage.s3.region": "us-east-1",
    "rsm.config.storage.s3.path.style.access.enabled": "true",
    "rsm.config.storage.aws.access.key.id": "krec",
    "rsm.config.storage.aws.secret.access.key": "krec-secret",
})
if encryption == "on":
    props.update({
        "rsm.config.encryption.key.pair.id": "k1",
        "rsm.config.encryption.key.pairs": "k1",
        "rsm.config.encryption.key.pairs.k1.public.key.file": keys + "/k1-public.pem",
        "rsm.config.encryption.key.pairs.k1.private.key.file": keys + "/k1-private.pem",
    })
print(" ".join("%s=%s" % kv for kv in props.items()))
EOF
)"
echo "== starting the broker (Kafka 4.4, Aiven's plugin, S3 backend on moto at $ENDPOINT)"
BOOTSTRAP="$(BROKER_HEAP=1g BROKER_EXTRA_PROPS="$PROPS" bash interop/broker/broker.sh start "$BROKER")"
java_main() { java -Xmx512m -cp "$JAVA_CP" "$@"; }
java_main org.apache.kafka.tools.TopicCommand --bootstrap-server "$BOOTSTRAP" --create --topic "$TOPIC" \
    --partitions 1 --replication-factor 1 --config remote.storage.enable=true \
    --config segment.bytes=$((32 << 20)) --config local.retention.bytes=1 --config segment.ms=20000 >/dev/null

RECORDS=$(( (BYTES + RECORD_SIZE - 1) / RECORD_SIZE ))
echo "== producing $RECORDS records of $RECORD_SIZE bytes ($BYTES bytes of values) with Kafka's ProducerPerformance"
started=$SECONDS
java_main org.apache.kafka.tools.ProducerPerformance --topic "$TOPIC" --num-records "$RECORDS" \
    --record-size "$RECORD_SIZE" --throughput -1 --producer-props "bootstrap.servers=$BOOTSTRAP" \
    acks=1 linger.ms=5 batch.size=262144 compression.type=none >"$DIR/produce.log" 2>&1
echo "   produced in $((SECONDS - started)) s: $(tail -n 1 "$DIR/produce.log")"
# A record after segment.ms rolls the active segment: every record above is then in a closed one.
sleep 21
echo roll | java_main org.apache.kafka.tools.ConsoleProducer --bootstrap-server "$BOOTSTRAP" --topic "$TOPIC" >/dev/null 2>&1
echo "== waiting until every closed segment is uploaded and deleted locally"
part="$BROKER/logs/$TOPIC-0"
deadline=$((SECONDS + 1800))
while :; do
    live=$(find "$part" -maxdepth 1 -name '*.log' | wc -l)
    if [ "$live" -eq 1 ]; then
        first=$(basename "$(find "$part" -maxdepth 1 -name '*.log')" .log)
        [ "$((10#$first))" -ge "$RECORDS" ] && break
    fi
    [ "$SECONDS" -lt "$deadline" ] || die "segments not tiered within 30 min: $(ls "$part" | head)"
    sleep 2
done
find "$part" -maxdepth 1 -name '*.deleted' -delete
echo "   tiered $((SECONDS - started)) s after the first record was produced"

# KREC given while it is still being built (the data above takes minutes): wait for it.
for _ in $(seq 900); do [ -x "$KREC" ] && break; sleep 2; done
[ -x "$KREC" ] || die "$KREC is not there"
export AWS_ACCESS_KEY_ID=krec AWS_SECRET_ACCESS_KEY=krec-secret
LOCATION="s3://$BUCKET/$PREFIX"
S3_OPTS=(-X "s3.endpoint.url=$ENDPOINT" -X s3.region=us-east-1 -X s3.path.style.access.enabled=true "${KEY_OPTS[@]}")
META="$BROKER/logs/__remote_log_metadata-0"
# The remote tier's size and records, by krec verify (also: it must be clean).
"$KREC" verify --format json "${S3_OPTS[@]}" --remote "$LOCATION" --remote-metadata "$META" >"$DIR/verify.json" \
    || die "krec verify --remote found problems: $(grep -v '"segment"' "$DIR/verify.json" | head -n 5)"
read -r SEGMENTS REMOTE_BYTES REMOTE_RECORDS < <(tail -n 1 "$DIR/verify.json" | python3 -c \
    'import json,sys; r=json.load(sys.stdin)["summary"]["remote"]; print(r["segments"], r["bytes"], r["records"])')
[ "$REMOTE_RECORDS" -eq "$RECORDS" ] || die "the remote tier holds $REMOTE_RECORDS records, $RECORDS were produced"
echo "== remote tier: $SEGMENTS segments, $REMOTE_BYTES bytes of segments, $REMOTE_RECORDS records"
echo "== CPU: $(lscpu | sed -n 's/^Model name: *//p' | head -n 1), $(nproc) cores; $(date -u '+%Y-%m-%d %H:%M UTC'); $ROUNDS rounds"

# BENCH_LOCK=/tmp/bench.lock: the timed rounds hold it exclusively (builds hold it shared).
if [ -n "${BENCH_LOCK:-}" ]; then
    exec 9>"$BENCH_LOCK"
    echo "== waiting for the exclusive lock on $BENCH_LOCK"
    flock -x 9
fi
mkdir -p "$DIR/runs"
# measure NAME CMD...: one timed run, its output discarded; appends "NAME SECONDS MAXRSS_KB" to runs/times.
# Also appended: the reader's CPU seconds (user + system) and moto_server's CPU seconds during
# the run (from /proc: moto serves every byte on the same cores, which bounds what a second core
# can give the reader).
moto_cpu() { awk -v hz="$(getconf CLK_TCK)" '{ print ($14 + $15 + $16 + $17) / hz }' "/proc/$MOTO_PID/stat"; }
measure() {
    local name="$1" before after
    shift
    before="$(moto_cpu)"
    /usr/bin/time -f "%e %M %U %S" -o "$DIR/runs/time" "$@" >/dev/null 2>"$DIR/runs/$name.err" || {
        # krec verify exits 1 on a problem, which is a failure here too.
        die "$name failed: $(tail -n 3 "$DIR/runs/$name.err")"
    }
    after="$(moto_cpu)"
    echo "$name $(awk -v b="$before" -v a="$after" '{ printf "%s %s %.2f %.2f", $1, $2, $3 + $4, a - b }' "$DIR/runs/time")" >>"$DIR/runs/times"
}
: >"$DIR/runs/times"
for round in $(seq "$ROUNDS"); do
    echo "-- round $round"
    measure dump "$KREC" dump --format json "${S3_OPTS[@]}" "$LOCATION"
    measure verify "$KREC" verify "${S3_OPTS[@]}" --remote "$LOCATION" --remote-metadata "$META"
    measure verify-1 taskset -c 0 "$KREC" verify --threads 1 "${S3_OPTS[@]}" --remote "$LOCATION" --remote-metadata "$META"
    measure dump-1cpu taskset -c 0 "$KREC" dump --format json "${S3_OPTS[@]}" "$LOCATION"
    measure kafka java -Xmx1g -cp "$JAVA_CP" org.apache.kafka.tools.ConsumerPerformance \
        --bootstrap-server "$BOOTSTRAP" --topic "$TOPIC" --messages "$RECORDS" --group "bench-$round-$RANDOM" \
        --timeout 600000
    tail -n 5 "$DIR/runs/times"
done
# The same tier copied from moto to a local directory, read as the plugin's filesystem backend
# (file:///ROOT/PREFIX): the readers' own scaling with cores when no S3 server shares them.
if [ "${BENCH_LOCAL:-1}" = 1 ]; then
    rm -rf "$DIR/runs/local"
    "$PY" - "$ENDPOINT" "$BUCKET" "$PREFIX" "$DIR/runs/local" <<'EOF2'
import os, sys, boto3
endpoint, bucket, prefix, root = sys.argv[1:]
s3 = boto3.client("s3", endpoint_url=endpoint, region_name="us-east-1",
                  aws_access_key_id="krec", aws_secret_access_key="krec-secret")
for page in s3.get_paginator("list_objects_v2").paginate(Bucket=bucket, Prefix=prefix):
    for o in page.get("Contents", []):
        path = os.path.join(root, o["Key"])
        os.makedirs(os.path.dirname(path), exist_ok=True)
        s3.download_file(bucket, o["Key"], path)
EOF2
    LOCAL="file://$DIR/runs/local/$PREFIX"
    cat $(find "$DIR/runs/local" -type f) >/dev/null # into the page cache
    for round in $(seq "$ROUNDS"); do
        echo "-- round $round (local copy)"
        measure local-dump "$KREC" dump --format json "${KEY_OPTS[@]}" "$LOCAL"
        measure local-dump-1cpu taskset -c 0 "$KREC" dump --format json "${KEY_OPTS[@]}" "$LOCAL"
        measure local-verify "$KREC" verify "${KEY_OPTS[@]}" --remote "$LOCAL" --remote-metadata "$META"
        measure local-verify-1 taskset -c 0 "$KREC" verify --threads 1 "${KEY_OPTS[@]}" --remote "$LOCAL" --remote-metadata "$META"
        tail -n 4 "$DIR/runs/times"
    done
fi
[ -z "${BENCH_LOCK:-}" ] || flock -u 9
python3 - "$DIR/runs/times" "$REMOTE_BYTES" <<'EOF'
import statistics, sys
runs = {}
for line in open(sys.argv[1]):
    name, secs, rss, cpu, moto = line.split()
    runs.setdefault(name, []).append((float(secs), int(rss), float(cpu), float(moto)))
size = int(sys.argv[2])
med = {n: statistics.median(r[0] for r in rs) for n, rs in runs.items()}
cpu = {n: statistics.median(r[2] for r in rs) for n, rs in runs.items()}
moto = {n: statistics.median(r[3] for r in rs) for n, rs in runs.items()}
print("%-10s %9s %9s %12s %9s %9s" % ("", "median s", "MB/s", "peak RSS MiB", "CPU s", "moto CPU s"))
for n, rs in runs.items():
    print("%-10s %9.2f %9.0f %12.0f %9.2f %9.2f" % (n, med[n], size / med[n] / 1e6, max(r[1] for r in rs) / 1024, cpu[n], moto[n]))
for a, b, what, goal in (("kafka", "dump", "dump against Kafka's remote fetch", 3.0),
                         ("kafka", "verify", "verify --remote against Kafka's remote fetch", 3.0),
                         ("dump-1cpu", "dump", "dump, both cores against one", 1.8),
                         ("verify-1", "verify", "verify --remote, both cores against one", 1.8),
                         ("local-dump-1cpu", "local-dump", "local copy: dump, both cores against one", 1.8),
                         ("local-verify-1", "local-verify", "local copy: verify, both cores against one", 1.8)):
    if a not in med:
        continue
    x = med[a] / med[b]
    print("%-48s %5.2fx  (target %.1fx: %s)" % (what, x, goal, "met" if x >= goal else "missed"))
# On 2 cores shared with moto_server, both cores can at best run the reader's and moto's CPU
# time side by side: wall >= (reader CPU + moto CPU) / cores, and >= moto's CPU alone.
cores = len(__import__("os").sched_getaffinity(0))
for one, both, what in (("dump-1cpu", "dump", "dump"), ("verify-1", "verify", "verify --remote")):
    floor = max((cpu[both] + moto[both]) / cores, moto[both])
    print("%-48s %5.2fx  (one core's %.2f s against the floor of %.2f s that the CPU time of reader and moto leave %d cores)"
          % (what + ": the most both cores could give", med[one] / floor, med[one], floor, cores))
for n in ("dump", "verify", "dump-1cpu", "verify-1", "local-dump", "local-verify"):
    if n not in runs:
        continue
    rss = max(r[1] for r in runs[n]) / 1024
    print("%-48s %5.0f MiB (target < 256 MiB: %s)" % ("peak RSS of " + n, rss, "met" if rss < 256 else "missed"))
EOF
