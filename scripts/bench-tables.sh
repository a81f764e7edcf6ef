#!/usr/bin/env bash
# Benchmark (not a test): Kafka data as tables (issue 28, "Must show" (b) and (c)). `krec export`
# to Parquet and `krec sql` against the ways people do it today, side by side in one run, on the
# same records from a partition directory and from a live topic of a local Kafka 4.4 broker.
#
# Usage: [BENCH_ROUNDS=N] [BENCH_CODECS="none lz4"] [BENCH_SIZE_MIB=1024] [BENCH_LOCK=FILE]
#        bash scripts/bench-tables.sh [DIR]
#
#   DIR             work directory (default: a fresh one under /tmp, removed at the end; a DIR
#                   given keeps the Python venv DIR/venv for the next run, its data is removed)
#   BENCH_ROUNDS    rounds (default 3): each round runs every row once; medians are reported
#   BENCH_CODECS    codecs of the data (default "none lz4")
#   BENCH_SIZE_MIB  MiB of 100-byte values per codec (default 1024: 10,737,418 records)
#   BENCH_LOCK      a lock file (e.g. /tmp/bench.lock) taken exclusively (flock -x) for each round
#                   of each codec, the timed part only, and shared (flock -s) for cargo build, so
#                   that nobody else's build runs while this times
#
# Data (per codec): `krec gen` into two partition directories DIR/CODEC/tbl-0 and tbl-1 (half the
# records each, one segment each): v2 batches of 200 records, 100-byte JSON-object values
# (--content json), 9-byte keys (--key-size 9: "key-" and the first 5 digits of the record's
# index, so about 100,000 distinct keys with a skew: the most frequent ones 222 times, about
# 10,000 keys once), the codec's compression. `krec ship` copies the same batches into the topic
# tbl-CODEC (2 partitions) of a broker started with interop/broker/broker.sh (Kafka's jars in
# interop/java/target/lib: `mvn -f interop/java/pom.xml package`). Every tool reads these same
# records. Rows, each under /usr/bin/time -v (wall, user + sys CPU, peak RSS of the largest
# process), stdout to a file, outputs into DIR/out (removed before each row):
#
#   export-dir          krec export DIR/CODEC/tbl-0 DIR/CODEC/tbl-1 -o DIR/out (all cores)
#   export-dir-j1       the same with --jobs 1
#   export-live         krec export kafka://BROKER/tbl-CODEC -o DIR/out (all cores)
#   export-live-j1      the same with --jobs 1
#   consumer-live       scripts/bench-tables-consumer.py: confluent-kafka Consumer -> pyarrow
#                       RecordBatches -> pyarrow ParquetWriter (zstd)
#   dump-duckdb-dir     krec dump --deep --format json --isolation read-committed DIRS |
#                       scripts/bench-tables-duckdb.py json2parquet (DuckDB read_json -> Parquet)
#   dump-duckdb-live    the same from kafka://BROKER/tbl-CODEC
#   sql-dir             krec sql 'SELECT key, count(*) AS n FROM t GROUP BY key ORDER BY 2 DESC
#                       LIMIT 10' --table t=DIR/CODEC/tbl-0,DIR/CODEC/tbl-1
#   sql-live            the same query with --table t=kafka://BROKER/tbl-CODEC
#   duckdb-sql          the same query in DuckDB (python duckdb) on the dataset krec export wrote
#                       (made once before the rounds, untimed: DuckDB's figure has no export step)
#   kcat-jq             kcat -C -J -e -o beginning -t tbl-CODEC | jq -r .key | sort | uniq -c |
#                       sort -rn | head
#
# Prints the CPU (lscpu), the load average at each round's start, one line per run, then a
# markdown table of medians and the issue's targets: export >= 10x the consumer, >= 3x
# dump|DuckDB, all cores >= 1.8x one, export peak RSS < 512 MiB, krec sql within 2x of DuckDB on
# the Parquet, >= 20x kcat|jq. Round 1 checks the row count of every Parquet output and prints
# each query's result. Needs kcat, jq, java, GNU time and python3 (a venv with pinned pyarrow,
# duckdb and confluent-kafka is made in DIR/venv from PyPI); exit 2 without them.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"

ROUNDS="${BENCH_ROUNDS:-3}"
CODECS="${BENCH_CODECS:-none lz4}"
SIZE_MIB="${BENCH_SIZE_MIB:-1024}"
LOCK="${BENCH_LOCK:-}"
# pyarrow and duckdb as the interop suite pins them (the readers its checks use); confluent-kafka
# is this benchmark's own.
mapfile -t PINS < <(grep -E '^(pyarrow|duckdb)==' interop/py/requirements.txt)
[ "${#PINS[@]}" = 2 ] || { echo "bench-tables: no pyarrow/duckdb pins in interop/py/requirements.txt" >&2; exit 2; }
PINS+=(confluent-kafka==2.16.1)
for n in "$ROUNDS" "$SIZE_MIB"; do
    case "$n" in '' | *[!0-9]* | 0) echo "bench-tables: not a positive number: '$n'" >&2; exit 2 ;; esac
done
for tool in kcat jq java python3; do
    command -v "$tool" >/dev/null || { echo "bench-tables: $tool is needed" >&2; exit 2; }
done
[ -x /usr/bin/time ] || { echo "bench-tables: GNU time is needed at /usr/bin/time" >&2; exit 2; }
ls interop/java/target/lib/kafka-tools-*.jar >/dev/null 2>&1 \
    || { echo "bench-tables: no Kafka jars in interop/java/target/lib (mvn -f interop/java/pom.xml package)" >&2; exit 2; }
CP="$ROOT/interop/java/target/lib/*"
step() { printf '==> %s\n' "$*" >&2; }

if [ -z "${KREC:-}" ]; then
    step "cargo build --release -p krec"
    if [ -n "$LOCK" ]; then flock -s "$LOCK" cargo build --release -q -p krec; else cargo build --release -q -p krec; fi
    KREC="$(cargo metadata --format-version 1 --no-deps | python3 -c 'import json,sys; print(json.load(sys.stdin)["target_directory"])')/release/krec"
fi

GIVEN="${1:-}"
WORK="${GIVEN:-$(mktemp -d /tmp/krec-bench-tables.XXXXXX)}"
mkdir -p "$WORK"
WORK="$(cd "$WORK" && pwd)"
VENV="$WORK/venv"
if [ ! -x "$VENV/bin/python" ]; then
    step "python venv in $VENV: ${PINS[*]}"
    python3 -m venv "$VENV"
fi
if ! "$VENV/bin/python" -m pip freeze 2>/dev/null | grep -qx "${PINS[0]}"; then
    "$VENV/bin/python" -m pip install -q "${PINS[@]}"
fi
PY="$VENV/bin/python"

cleanup() {
    interop/broker/broker.sh stop "$WORK/broker" >/dev/null 2>&1 || true
    rm -rf "$WORK/broker" "$WORK/out" "$WORK/dataset" "$WORK"/data-*
    [ -n "$GIVEN" ] || rm -rf "$WORK"
}
trap cleanup EXIT
lock_on() { if [ -n "$LOCK" ]; then exec 9>"$LOCK"; flock -x 9; fi; }
lock_off() { if [ -n "$LOCK" ]; then flock -u 9; exec 9>&-; fi; }

step "starting a broker in $WORK/broker"
BOOT="$(BROKER_HEAP=2g interop/broker/broker.sh start "$WORK/broker")"
RECORDS=$((SIZE_MIB * 1048576 / 100))
HALF0=$(((RECORDS + 1) / 2))
HALF1=$((RECORDS / 2))
QUERY='SELECT key, count(*) AS n FROM t GROUP BY key ORDER BY 2 DESC LIMIT 10'
RESULTS="$WORK/results.tsv"
: >"$RESULTS"
echo "== CPU: $(lscpu | sed -n 's/^Model name: *//p' | head -n 1), $(nproc) cores; $(date -u '+%Y-%m-%d %H:%M UTC'); krec: $KREC; broker $BOOT; $RECORDS records per codec; $ROUNDS rounds"

# measure CODEC ROUND NAME CMD...: one timed run, a line on stdout and a row in RESULTS.
measure() {
    local codec="$1" round="$2" name="$3" start end ok=1
    shift 3
    rm -rf "$WORK/out"
    mkdir -p "$WORK/out"
    sync
    start=$(date +%s.%N)
    /usr/bin/time -v -o "$WORK/time.txt" "$@" >"$WORK/stdout-$codec-$name.txt" 2>"$WORK/stderr-$codec-$name.txt" || ok=0
    end=$(date +%s.%N)
    "$PY" - "$start" "$end" "$codec" "$round" "$name" "$ok" "$WORK/time.txt" "$RESULTS" <<'EOF'
import re, sys
start, end, codec, rnd, name, ok, tv, results = sys.argv[1:]
t = open(tv).read()
user = float(re.search(r"User time \(seconds\): ([\d.]+)", t).group(1))
sys_ = float(re.search(r"System time \(seconds\): ([\d.]+)", t).group(1))
rss = int(re.search(r"Maximum resident set size \(kbytes\): (\d+)", t).group(1))
wall = float(end) - float(start)
flag = "" if ok == "1" else "   FAILED"
print(f"{codec:<5} r{rnd} {name:<17} {wall:8.2f} s   cpu {user + sys_:7.2f} s   peak RSS {rss / 1024:7.1f} MiB{flag}", flush=True)
with open(results, "a") as f:
    f.write(f"{codec}\t{rnd}\t{name}\t{wall}\t{user + sys_}\t{rss}\t{ok}\n")
EOF
    if [ "$ok" = 0 ]; then tail -n 5 "$WORK/stderr-$codec-$name.txt" | sed 's/^/    /'; fi
    if [ "$round" = 1 ] && [ -n "$(find "$WORK/out" -name '*.parquet' -print -quit)" ]; then
        echo "      rows in the Parquet output: $("$PY" -c 'import sys, pyarrow.dataset as ds; print(ds.dataset(sys.argv[1], format="parquet").count_rows())' "$WORK/out") (expected $RECORDS)"
    fi
}

for codec in $CODECS; do
    data="$WORK/data-$codec"
    topic="tbl-$codec"
    step "$codec: krec gen into $data/tbl-0 and tbl-1, krec ship into topic $topic"
    mkdir -p "$data/tbl-0" "$data/tbl-1"
    for p in 0 1; do
        n=$HALF0
        [ "$p" = 1 ] && n=$HALF1
        "$KREC" gen --records "$n" --value-size 100 --key-size 9 --content json --records-per-batch 200 \
            --compression "$codec" --seed "$p" -o "$data/tbl-$p/00000000000000000000.log" >/dev/null
    done
    java -cp "$CP" org.apache.kafka.tools.TopicCommand --bootstrap-server "$BOOT" --create --topic "$topic" \
        --partitions 2 --replication-factor 1 --config retention.ms=-1 --config segment.bytes=1073741824 >/dev/null
    "$KREC" ship "$data/tbl-0" "$data/tbl-1" "kafka://$BOOT/$topic" >/dev/null
    stored=$(du -cb "$data"/tbl-*/*.log | tail -n 1 | cut -f 1)
    echo "== $codec: $RECORDS records, $stored bytes of segments in 2 partitions"
    dirs=("$data/tbl-0" "$data/tbl-1")
    url="kafka://$BOOT/$topic"
    step "$codec: the dataset DuckDB queries (krec export, untimed)"
    rm -rf "$WORK/dataset"
    "$KREC" export "${dirs[@]}" -o "$WORK/dataset" >/dev/null
    cat "$data"/tbl-*/*.log "$WORK"/broker/logs/"$topic"-*/*.log >/dev/null
    for round in $(seq 1 "$ROUNDS"); do
        lock_on
        echo "-- $codec round $round, load average $(cut -d ' ' -f 1-3 /proc/loadavg)"
        measure "$codec" "$round" export-dir "$KREC" export "${dirs[@]}" -o "$WORK/out/ds"
        measure "$codec" "$round" export-dir-j1 "$KREC" export --jobs 1 "${dirs[@]}" -o "$WORK/out/ds"
        measure "$codec" "$round" export-live "$KREC" export "$url" -o "$WORK/out/ds"
        measure "$codec" "$round" export-live-j1 "$KREC" export --jobs 1 "$url" -o "$WORK/out/ds"
        measure "$codec" "$round" consumer-live "$PY" scripts/bench-tables-consumer.py "$BOOT" "$topic" "$WORK/out/consumer.parquet"
        measure "$codec" "$round" dump-duckdb-dir sh -c '"$1" dump --deep --format json --isolation read-committed "$2" "$3" | "$4" scripts/bench-tables-duckdb.py json2parquet "$5"' \
            sh "$KREC" "${dirs[@]}" "$PY" "$WORK/out/dump.parquet"
        measure "$codec" "$round" dump-duckdb-live sh -c '"$1" dump --deep --format json --isolation read-committed "$2" | "$3" scripts/bench-tables-duckdb.py json2parquet "$4"' \
            sh "$KREC" "$url" "$PY" "$WORK/out/dump.parquet"
        measure "$codec" "$round" sql-dir "$KREC" sql "$QUERY" --table "t=${dirs[0]},${dirs[1]}"
        measure "$codec" "$round" sql-live "$KREC" sql "$QUERY" --table "t=$url"
        measure "$codec" "$round" duckdb-sql "$PY" scripts/bench-tables-duckdb.py sql "$WORK/dataset"
        measure "$codec" "$round" kcat-jq sh -c 'kcat -C -b "$1" -t "$2" -o beginning -e -J -q | jq -r .key | sort | uniq -c | sort -rn | head' \
            sh "$BOOT" "$topic"
        lock_off
        if [ "$round" = 1 ]; then
            for q in sql-dir sql-live duckdb-sql kcat-jq; do
                echo "      $q result:"
                sed 's/^/        /' "$WORK/stdout-$codec-$q.txt"
            done
        fi
    done
    rm -rf "$data" "$WORK/dataset" "$WORK/out"
    java -cp "$CP" org.apache.kafka.tools.TopicCommand --bootstrap-server "$BOOT" --delete --topic "$topic" >/dev/null 2>&1 || true
done

echo
echo "-- medians of $ROUNDS rounds (peak RSS: the largest of the rounds); load average now $(cut -d ' ' -f 1-3 /proc/loadavg)"
"$PY" - "$RESULTS" "$RECORDS" <<'EOF'
import statistics, sys
rows, failed = {}, set()
for line in open(sys.argv[1]):
    codec, rnd, name, wall, cpu, rss, ok = line.rstrip("\n").split("\t")
    if ok != "1":
        failed.add((codec, name))
        continue
    rows.setdefault((codec, name), []).append((float(wall), float(cpu), int(rss)))
records = int(sys.argv[2])
med = {k: statistics.median(w for w, _, _ in v) for k, v in rows.items()}
print("| codec | row | wall s (median) | records/s | CPU s (median) | peak RSS MiB |")
print("|---|---|---:|---:|---:|---:|")
for (codec, name), v in rows.items():
    cpu = statistics.median(c for _, c, _ in v)
    rss = max(r for _, _, r in v) / 1024
    print(f"| {codec} | {name} | {med[codec, name]:.2f} | {records / med[codec, name] / 1e6:.2f} M | {cpu:.2f} | {rss:.0f} |")
for k in sorted(failed):
    print(f"| {k[0]} | {k[1]} | failed | | | |")
print()

def ratio(codec, slow, fast):
    a, b = med.get((codec, slow)), med.get((codec, fast))
    return None if a is None or b is None else a / b

checks = [
    ("krec export (dir) vs confluent-kafka consumer -> pyarrow", "consumer-live", "export-dir", 10, True),
    ("krec export (live) vs confluent-kafka consumer -> pyarrow", "consumer-live", "export-live", 10, True),
    ("krec export vs krec dump | DuckDB read_json (dir)", "dump-duckdb-dir", "export-dir", 3, True),
    ("krec export vs krec dump | DuckDB read_json (live)", "dump-duckdb-live", "export-live", 3, True),
    ("krec export all cores vs --jobs 1 (dir)", "export-dir-j1", "export-dir", 1.8, True),
    ("krec export all cores vs --jobs 1 (live)", "export-live-j1", "export-live", 1.8, True),
    ("krec sql (dir) time / DuckDB on the Parquet", "sql-dir", "duckdb-sql", 2, False),
    ("krec sql (dir) vs kcat -J | jq | sort | uniq -c", "kcat-jq", "sql-dir", 20, True),
    ("krec sql (live) vs kcat -J | jq | sort | uniq -c", "kcat-jq", "sql-live", 20, True),
]
for codec in sorted({c for c, _ in rows}):
    for label, slow, fast, target, at_least in checks:
        r = ratio(codec, slow, fast)
        if r is None:
            print(f"{codec}: {label}: not measured")
            continue
        met = r >= target if at_least else r <= target
        goal = f">= {target}x" if at_least else f"<= {target}x"
        print(f"{codec}: {label}: {r:.2f}x (target {goal}: {'met' if met else 'missed'})")
    peak = max((r for (c, n), v in rows.items() if c == codec and n.startswith("export") for _, _, r in v), default=None)
    if peak is not None:
        print(f"{codec}: krec export peak RSS: {peak / 1024:.0f} MiB (target < 512 MiB: {'met' if peak < 512 * 1024 else 'missed'})")
EOF
