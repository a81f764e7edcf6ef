#!/usr/bin/env bash
# Benchmark (not a test): `krec verify` of a broker data directory with 200 partitions and 4 GiB
# of segments, single-threaded and with all cores, against reading the same bytes with `cat`.
#
# Usage: bash scripts/bench-verify-root.sh [DIR]   (default: a fresh directory under /tmp)
# Prints wall times and MB/s; run on a quiet machine. The data is read from the page cache
# (a warm-up pass first), so the figures compare CPU work, not the disk.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
cargo build -q --release -p krec
KREC="$(cargo metadata --format-version 1 --no-deps | python3 -c 'import json,sys; print(json.load(sys.stdin)["target_directory"])')/release/krec"
ROOT="${1:-$(mktemp -d /tmp/krec-bench-root.XXXXXX)}"
PARTITIONS=200
echo "== generating $PARTITIONS partitions of ~20.5 MiB (uncompressed v2, 100-byte values) in $ROOT"
seg="$ROOT/seed.log"
"$KREC" gen --records 200000 --value-size 100 --records-per-batch 500 --output "$seg" >/dev/null
printf '#\nnode.id=1\nversion=1\ncluster.id=bench\n' >"$ROOT/meta.properties"
for i in $(seq 0 $((PARTITIONS - 1))); do
    d="$ROOT/bench-$i"
    mkdir -p "$d"
    cp "$seg" "$d/00000000000000000000.log"
done
rm "$seg"
bytes=$(du -cb "$ROOT"/bench-*/*.log | tail -n 1 | cut -f 1)
echo "== $bytes bytes in $PARTITIONS partitions; CPU: $(lscpu | sed -n 's/^Model name: *//p' | head -n 1), $(nproc) cores"
cat "$ROOT"/bench-*/*.log >/dev/null # warm the page cache
run() { # run LABEL CMD...
    local label="$1" start end
    shift
    start=$(date +%s.%N)
    "$@" >/dev/null
    end=$(date +%s.%N)
    python3 -c "import sys; s=float(sys.argv[2])-float(sys.argv[1]); print(f'{sys.argv[3]:<28} {s:7.2f} s {int(sys.argv[4])/s/1e6:8.0f} MB/s')" "$start" "$end" "$label" "$bytes"
}
for round in 1 2; do
    echo "-- round $round"
    run "cat" sh -c "cat \"$ROOT\"/bench-*/*.log"
    run "krec verify --threads 1" "$KREC" verify "$ROOT" --threads 1
    run "krec verify (all cores)" "$KREC" verify "$ROOT"
done
[ -n "${1:-}" ] || rm -rf "$ROOT"
